import { test } from 'node:test'
import assert from 'node:assert/strict'
import { io as connect, type Socket } from 'socket.io-client'
import { build, TEST_API_KEY } from '../helper.js'

function outcome (socket: Socket): Promise<'connected' | string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { resolve('timeout') }, 5000)
    socket.on('connect', () => { clearTimeout(timer); resolve('connected') })
    socket.on('connect_error', (err) => { clearTimeout(timer); resolve(err.message) })
  })
}

test('socket.io accepts the key in auth or headers and refuses others with Unauthorized', async (t) => {
  const { listen } = await build(t)
  const url = await listen()
  const cases: Array<[string, Parameters<typeof connect>[1], string]> = [
    ['auth.apiKey', { auth: { apiKey: TEST_API_KEY } }, 'connected'],
    ['x-api-key header', { extraHeaders: { 'x-api-key': TEST_API_KEY }, transports: ['polling'] }, 'connected'],
    ['bearer header', { extraHeaders: { authorization: `Bearer ${TEST_API_KEY}` }, transports: ['polling'] }, 'connected'],
    ['no key', {}, 'Unauthorized'],
    ['wrong key', { auth: { apiKey: 'nope-nope-nope-nope' } }, 'Unauthorized']
  ]
  for (const [name, opts, expected] of cases) {
    const socket = connect(url, { ...opts, reconnection: false, forceNew: true })
    const result = await outcome(socket)
    socket.close()
    assert.equal(result, expected, name)
  }
})

test('the broadcaster reaches every connected client, with the event log\'s eventId', async (t) => {
  const { listen, app } = await build(t)
  const url = await listen()
  const clients = [0, 1].map(() => connect(url, { auth: { apiKey: TEST_API_KEY }, reconnection: false, forceNew: true }))
  t.after(() => { for (const c of clients) c.close() })
  await Promise.all(clients.map(outcome))
  const received = clients.map((c) => new Promise((resolve) => c.once('session-deleted', resolve)))
  app.domainEvents.emit('session-deleted', { sessionId: 'abc' })
  // the first event of a fresh log
  assert.deepEqual(await Promise.all(received), [{ sessionId: 'abc', eventId: 1 }, { sessionId: 'abc', eventId: 1 }])
})

test('closing the server does not wait for clients that never joined: a refused key, a bare engine.io handshake', async (t) => {
  const { listen, app } = await build(t)
  const url = await listen()
  // refused by the key check: the socket gets connect_error, its engine.io connection stays open and answers pings
  const refused = connect(url, { auth: { apiKey: 'nope-nope-nope-nope' }, reconnection: false, forceNew: true })
  t.after(() => { refused.close() })
  assert.equal(await outcome(refused), 'Unauthorized')
  // an engine.io handshake over long polling, with a poll pending and no namespace connect
  const open = await fetch(`${url}/socket.io/?EIO=4&transport=polling`)
  const sid = (JSON.parse((await open.text()).slice(1)) as { sid: string }).sid
  const poll = fetch(`${url}/socket.io/?EIO=4&transport=polling&sid=${sid}`).then(async (r) => await r.text(), () => 'ended')
  const joined = connect(url, { auth: { apiKey: TEST_API_KEY }, reconnection: false, forceNew: true })
  t.after(() => { joined.close() })
  assert.equal(await outcome(joined), 'connected')
  // without closing those, the HTTP server's close waited for them for good (the engine.io pings keep them up)
  let timer: NodeJS.Timeout | undefined
  const closed = await Promise.race([
    app.close().then(() => 'closed'),
    new Promise((resolve) => { timer = setTimeout(() => { resolve('still open after 15 s') }, 15_000) })
  ])
  clearTimeout(timer)
  assert.equal(closed, 'closed')
  await poll
})
