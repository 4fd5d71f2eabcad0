import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build, TEST_API_KEY, waitFor } from '../helper.js'
import { connectSocket } from '../support/clients.js'
import { skipWithoutRedis, startRedis } from '../support/redis.js'
import { spawnService } from '../support/service.js'

// REDIS_URL: an event one instance emits reaches the socket.io clients of another (through a real Redis).

test('with REDIS_URL, a client connected to one node hears the events another node emits', { skip: skipWithoutRedis }, async (t) => {
  const redis = await startRedis()
  t.after(async () => { await redis.stop() })
  const one = await build(t, { REDIS_URL: redis.url })
  const two = await build(t, { REDIS_URL: redis.url })
  const base = await two.listen()
  const socket = await connectSocket(base, TEST_API_KEY)
  t.after(() => { socket.close() })
  const heard: unknown[] = []
  socket.on('session-deleted', (p: unknown) => { heard.push(p) })
  // a domain event on instance one goes out through its broadcaster (outbox, then io.emit)
  one.app.domainEvents.emit('session-deleted', { sessionId: 'far-away' })
  await waitFor(() => heard.length > 0, 5000, 'the event on the other instance')
  assert.deepEqual(heard, [{ sessionId: 'far-away', eventId: 1 }])
})

// The same through the built service, the bundle `npm start` runs (scripts/build.mjs): the adapter is loaded only
// with REDIS_URL, and bundled it had lost its named export (the start died on "createAdapter is not a function";
// only the benchmarks' smoke run in CI started the bundle with Redis). Two nodes, one Redis: a session created
// on one is heard by a client of the other.
test('the built service with REDIS_URL starts, and a client of one node hears a session created on another', { skip: skipWithoutRedis, timeout: 60_000 }, async (t) => {
  const redis = await startRedis()
  t.after(async () => { await redis.stop() })
  // WA_WEBSOCKET_URL: nothing listens there; the new session only tries to link
  const env = { REDIS_URL: redis.url, WA_WEBSOCKET_URL: 'ws://127.0.0.1:9/ws/chat' }
  const [one, two] = await Promise.all([spawnService({ t, env, name: 'one' }), spawnService({ t, env, name: 'two' })])
  const socket = await connectSocket(two.base, two.apiKey)
  t.after(() => { socket.close() })
  const heard: Array<{ sessionId?: string }> = []
  socket.on('session-created', (p: { sessionId?: string }) => { heard.push(p) })
  const res = await fetch(`${one.base}/api/sessions`, {
    method: 'POST',
    headers: { 'x-api-key': one.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId: 'bundled-redis', sessionName: 'bundled', authMethod: 'qrcode' })
  })
  assert.equal(res.status, 200, await res.clone().text())
  await waitFor(() => heard.length > 0, 10_000, 'session-created from the other node')
  assert.equal(heard[0].sessionId, 'bundled-redis')
})

test('an unreachable REDIS_URL stops the start with a clear message', async (t) => {
  await assert.rejects(build(t, { REDIS_URL: 'redis://127.0.0.1:9' }), /Could not connect to Redis \(REDIS_URL\)/)
})
