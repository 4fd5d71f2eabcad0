import assert from 'node:assert/strict'
import { test } from 'node:test'
import { io as connect, type Socket } from 'socket.io-client'
import { build, TEST_API_KEY, waitFor, type TestApp } from '../helper.js'
import { postgresUrl, usePostgres } from '../support/db-matrix.js'
import { startRedis, skipWithoutRedis } from '../support/redis.js'
import { insertSession } from '../support/sessions.js'

// Two nodes on one PostgreSQL database and one Redis: socket.io subscriptions are rooms, and the Redis
// adapter carries them; a key made on one node works on the other at once, and revoking it there closes
// its sockets on every node.

usePostgres()

test('two nodes with Redis: a socket hears only the sessions it subscribed to; keys and revocations reach every node', { skip: skipWithoutRedis, timeout: 120_000 }, async (t) => {
  const redis = await startRedis()
  t.after(async () => { await redis.stop() })
  const env = { DATABASE_URL: await postgresUrl(), REDIS_URL: redis.url }
  const one = await build(t, { ...env, NODE_ID: 'one' })
  const two = await build(t, { ...env, NODE_ID: 'two' })
  const base = await two.listen()
  for (const id of ['a', 'b']) {
    await insertSession(one.app, id)
  }

  const sockets: Socket[] = []
  t.after(() => { for (const socket of sockets) socket.close() })
  const open = async (auth: Record<string, unknown>): Promise<{ socket: Socket, heard: string[] }> => {
    const socket = connect(base, { path: '/socket.io/', auth, transports: ['websocket'], reconnection: false, forceNew: true })
    sockets.push(socket)
    const heard: string[] = []
    socket.on('statuses-updated', (p: { sessionId: string }) => { heard.push(p.sessionId) })
    await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('connect_error', reject) })
    return { socket, heard }
  }
  /** node one emits for a then b, then a marker on a; waits until `until` has the marker */
  const round = async (app: TestApp, until: string[], marker: string): Promise<void> => {
    const from = until.length
    app.app.domainEvents.emit('statuses-updated', { sessionId: 'b', message: 'b' })
    app.app.domainEvents.emit('statuses-updated', { sessionId: 'a', message: marker })
    await waitFor(() => until.slice(from).includes('a'), 10_000, `the ${marker} event on node two`)
  }

  const adminA = await open({ apiKey: TEST_API_KEY, sessionIds: ['a'] })
  const adminAll = await open({ apiKey: TEST_API_KEY })
  await round(one, adminA.heard, 'first')
  await waitFor(() => adminAll.heard.length >= 2, 10_000, 'both events on the unfiltered socket')
  assert.deepEqual(adminA.heard, ['a'], 'the socket subscribed to a heard nothing of b')
  assert.deepEqual(adminAll.heard, ['b', 'a'])

  // subscribe over the connection: now b too
  assert.deepEqual(await adminA.socket.timeout(5000).emitWithAck('subscribe', { sessionIds: ['b'] }), { success: true, data: { sessionIds: ['a', 'b'] } })
  await round(one, adminA.heard, 'second')
  assert.deepEqual(adminA.heard, ['a', 'b', 'a'])

  // a key made on node one is known to node two at once (its look-up reads the database)
  const made = await one.api({ method: 'POST', url: '/api/keys', payload: { name: 'tenant', sessions: ['a'], scopes: ['read'] } })
  assert.equal(made.statusCode, 200, made.body)
  const key = made.json<{ data: { id: string, key: string } }>().data
  const list = await two.app.inject({ url: '/api/sessions', headers: { authorization: `Bearer ${key.key}` } })
  assert.equal(list.statusCode, 200, list.body)
  assert.deepEqual(list.json<{ data: Array<{ sessionId: string }> }>().data.map((s) => s.sessionId), ['a'])
  const tenant = await open({ apiKey: key.key })
  await round(one, tenant.heard, 'third')
  assert.deepEqual(tenant.heard, ['a'], 'the tenant\'s socket on node two heard only its session')

  // revoked on node one: refused on node two at once, and its socket there closed
  const closed = new Promise<string>((resolve) => { tenant.socket.once('disconnect', resolve) })
  assert.equal((await one.api({ method: 'DELETE', url: `/api/keys/${key.id}` })).statusCode, 200)
  assert.equal((await two.app.inject({ url: '/api/sessions', headers: { 'x-api-key': key.key } })).statusCode, 401)
  assert.equal(await closed, 'io server disconnect')
})
