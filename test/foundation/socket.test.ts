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
