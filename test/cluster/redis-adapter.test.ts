import assert from 'node:assert/strict'
import { test } from 'node:test'
import { io } from 'socket.io-client'
import { build, TEST_API_KEY, waitFor } from '../helper.js'
import { skipWithoutRedis, startRedis } from '../support/redis.js'

// REDIS_URL: an event one instance emits reaches the socket.io clients of another (through a real Redis).

test('with REDIS_URL, a client connected to one node hears the events another node emits', { skip: skipWithoutRedis }, async (t) => {
  const redis = await startRedis()
  t.after(async () => { await redis.stop() })
  const one = await build(t, { REDIS_URL: redis.url })
  const two = await build(t, { REDIS_URL: redis.url })
  const base = await two.listen()
  const socket = io(base, { path: '/socket.io/', auth: { apiKey: TEST_API_KEY }, transports: ['websocket'], reconnection: false })
  t.after(() => { socket.close() })
  const heard: unknown[] = []
  socket.on('session-deleted', (p: unknown) => { heard.push(p) })
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('connect_error', reject) })
  // a domain event on instance one goes out through its broadcaster (outbox, then io.emit)
  one.app.domainEvents.emit('session-deleted', { sessionId: 'far-away' })
  await waitFor(() => heard.length > 0, 5000, 'the event on the other instance')
  assert.deepEqual(heard, [{ sessionId: 'far-away', eventId: 1 }])
})

test('an unreachable REDIS_URL stops the start with a clear message', async (t) => {
  await assert.rejects(build(t, { REDIS_URL: 'redis://127.0.0.1:9' }), /Could not connect to Redis \(REDIS_URL\)/)
})
