import assert from 'node:assert/strict'
import { test } from 'node:test'
import { io as connect, type Socket } from 'socket.io-client'
import { build, TEST_API_KEY, waitFor, type TestApp } from '../helper.js'
import { dialectEnv, dialectTest, postgresUrl, usePostgres } from '../support/db-matrix.js'
import { pino } from 'pino'
import { createEventLog, type LogEntry } from '../../plugins/events/log.js'
import type { EventStore } from '../../src/db/stores/events.js'

// The event log in-process: ids in commit order, GET /api/events, socket.io catch-up with auth.after, and
// two nodes on one PostgreSQL database (one sequence, the same events from either node).

usePostgres()

interface Logged { eventId: number, type: string, timestamp: string, data: Record<string, unknown> }

async function events (s: TestApp, query: string): Promise<{ events: Logged[], next: number }> {
  const res = await s.api({ method: 'GET', url: `/api/events${query}` })
  assert.equal(res.statusCode, 200, res.body)
  return (res.json() as { data: { events: Logged[], next: number } }).data
}

/** every event after `after`, paged */
async function allAfter (s: TestApp, after: number, limit = 7): Promise<Logged[]> {
  const out: Logged[] = []
  for (let cursor = after; ;) {
    const page = await events(s, `?after=${cursor}&limit=${limit}`)
    out.push(...page.events)
    if (page.events.length < limit) return out
    cursor = page.next
  }
}

async function socketOf (
  base: string, auth: Record<string, unknown>
): Promise<{ socket: Socket, got: Array<{ type: string, payload: Record<string, unknown> }> }> {
  const socket = connect(base, { auth: { apiKey: TEST_API_KEY, ...auth }, transports: ['websocket'], reconnection: false, forceNew: true })
  const got: Array<{ type: string, payload: Record<string, unknown> }> = []
  socket.onAny((type: string, payload: Record<string, unknown>) => { got.push({ type, payload }) })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error('socket.io connect timed out')) }, 5000)
    socket.once('connect', () => { clearTimeout(timer); resolve() })
    socket.once('connect_error', (err) => { clearTimeout(timer); reject(err) })
  })
  return { socket, got }
}

dialectTest('GET /api/events pages the log in order; a socket with auth.after gets the missed events first, then live ones, none twice', async (t, dialect) => {
  const s = await build(t, await dialectEnv(dialect))
  const base = await s.listen()
  for (let i = 1; i <= 5; i++) s.app.domainEvents.emit('session-deleted', { sessionId: `s${i % 2}` })
  const first = await waitFor(async () => { const p = await allAfter(s, 0); return p.length === 5 ? p : undefined }, 5000, 'five logged events')
  assert.deepEqual(first.map((e) => e.eventId), [1, 2, 3, 4, 5])
  assert.deepEqual(first.map((e) => e.data), [1, 2, 3, 4, 5].map((i) => ({ sessionId: `s${i % 2}`, eventId: i })))
  assert.ok(first.every((e) => e.type === 'session-deleted' && !Number.isNaN(Date.parse(e.timestamp))))
  // by session, and the next cursor
  const one = await events(s, '?sessionId=s1&after=1')
  assert.deepEqual(one.events.map((e) => e.eventId), [3, 5])
  assert.equal(one.next, 5)
  assert.deepEqual(await events(s, '?after=5'), { events: [], next: 5 })
  const bad = await s.api({ method: 'GET', url: '/api/events?after=-1' })
  assert.equal(bad.statusCode, 400)
  assert.match((bad.json() as { error: string }).error, /after/)

  // catch-up from 2 while events keep being written: 3..5 first, then everything after, in order, once each
  const { socket, got } = await socketOf(base, { after: 2 })
  t.after(() => { socket.close() })
  for (let i = 6; i <= 40; i++) s.app.domainEvents.emit('status-deleted', { sessionId: 's1', statusId: String(i) })
  await waitFor(() => got.length >= 38 ? true : undefined, 10_000, `38 events on the socket (have ${got.length})`)
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.deepEqual(got.map((g) => g.payload.eventId), Array.from({ length: 38 }, (_, i) => i + 3))
  // the same sequence as GET /api/events
  const logged = await allAfter(s, 2, 10)
  assert.deepEqual(got.map((g) => ({ type: g.type, data: g.payload })), logged.map((e) => ({ type: e.type, data: e.data })))

  // a bad after is refused at the handshake
  await assert.rejects(socketOf(base, { after: 'x' }), /auth\.after must be an eventId/)
})

dialectTest('appends on their own that come together are written together, in order; a failed write fails its own batch only', async (t, dialect) => {
  const s = await build(t, await dialectEnv(dialect))
  // a second log over the app's own event store, counting the store's transactions
  const real = s.app.stores.events
  let transactions = 0
  let failNext = false
  const store: EventStore = Object.assign(Object.create(real) as EventStore, {
    append: async (rows: Parameters<EventStore['append']>[0]) => {
      transactions++
      if (failNext) { failNext = false; throw new Error('the database refused') }
      await real.append(rows)
    }
  })
  const log = createEventLog({ store, transaction: s.app.stores.transaction, log: pino({ level: 'silent' }), retentionMs: 3_600_000, pruneIntervalMs: 3_600_000 })
  await log.start()
  t.after(async () => { await log.stop() })
  const seen: LogEntry[] = []
  log.onEvent((e) => { seen.push(e) })

  // 50 sessions' connection-status at once (a node taking them over): the first goes alone, the 49 that came
  // while it was written go in the next transaction
  await Promise.all(Array.from({ length: 50 }, async (_, i) => { await log.append('session-deleted', { sessionId: `b${i}` }) }))
  assert.ok(transactions <= 2, `${transactions} transactions for 50 appends`)
  assert.deepEqual(seen.map((e) => e.data.sessionId), Array.from({ length: 50 }, (_, i) => `b${i}`), 'in the order appended')
  assert.deepEqual(seen.map((e) => e.eventId), [...seen.map((e) => e.eventId)].sort((a, b) => a - b))

  // a write that fails rejects the appends of its batch; the next batch is written
  failNext = true
  const first = log.append('session-deleted', { sessionId: 'x1' })
  const second = log.append('session-deleted', { sessionId: 'x2' })
  await assert.rejects(first, /refused/)
  await assert.rejects(second, /refused/)
  await log.append('session-deleted', { sessionId: 'x3' })
  assert.deepEqual(seen.slice(50).map((e) => e.data.sessionId), ['x3'])
})

test('two nodes on one PostgreSQL database: one sequence with no id skipped by a reader, the same events from either node', async (t) => {
  const url = await postgresUrl()
  const a = await build(t, { DATABASE_URL: url, NODE_ID: 'node-a', RATE_LIMIT_MAX: '1000000' })
  const b = await build(t, { DATABASE_URL: url, NODE_ID: 'node-b', RATE_LIMIT_MAX: '1000000' })
  const baseB = await b.listen()

  // a reader tails the log from node A while both nodes write at once: every id it ever sees is final
  // (nothing with a smaller id shows up later), so reading after the last id seen never misses one
  const tailed: number[] = []
  let stop = false
  const tail = (async () => {
    let cursor = 0
    while (!stop) {
      const page = await events(a, `?after=${cursor}&limit=1000`)
      tailed.push(...page.events.map((e) => e.eventId))
      cursor = page.next
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  })()
  const N = 150
  await Promise.all([a, b].map(async (node, n) => {
    for (let i = 0; i < N; i++) {
      await node.app.domainEvents.within(async (_trx, emit) => { emit('status-deleted', { sessionId: `node${n}`, statusId: String(i) }) })
    }
  }))
  const fromA = await allAfter(a, 0, 100)
  const fromB = await allAfter(b, 0, 100)
  await new Promise((resolve) => setTimeout(resolve, 200))
  stop = true
  await tail
  assert.equal(fromA.length, 2 * N)
  assert.deepEqual(fromB, fromA, 'the same events from either node')
  const ids = fromA.map((e) => e.eventId)
  assert.deepEqual([...ids].sort((x, y) => x - y), ids, 'in id order')
  assert.deepEqual(tailed, ids, 'the tailing reader saw every id, in order, once')
  // each node's own events in the order it wrote them
  for (const n of [0, 1]) assert.deepEqual(fromA.filter((e) => e.data.sessionId === `node${n}`).map((e) => e.data.statusId), Array.from({ length: N }, (_, i) => String(i)))

  // a socket catching up on node B gets what node A logs live too (node B's feed reads the shared log)
  const { socket, got } = await socketOf(baseB, { after: ids[ids.length - 10] })
  t.after(() => { socket.close() })
  a.app.domainEvents.emit('session-deleted', { sessionId: 'from-a' })
  await waitFor(() => got.some((g) => g.payload.sessionId === 'from-a') ? true : undefined, 5000, 'node A\'s live event on node B')
  const after = await allAfter(a, ids[ids.length - 10])
  assert.deepEqual(got.map((g) => g.payload.eventId), after.map((e) => e.eventId))
  assert.equal(after.length, 10)
})

test('events older than EVENTS_RETENTION_HOURS are removed once their webhook deliveries are made; 0 is refused', async (t) => {
  // 0.0002 h = 0.72 s, looked at every 100 ms
  const s = await build(t, { EVENTS_RETENTION_HOURS: '0.0002', CLEANUP_INTERVAL_MS: '100' })
  s.app.domainEvents.emit('session-deleted', { sessionId: 'old' })
  assert.equal((await allAfter(s, 0)).length, 1)
  await waitFor(async () => (await allAfter(s, 0)).length === 0 ? true : undefined, 10_000, 'the old event removed')
  // ids go on from where they were
  s.app.domainEvents.emit('session-deleted', { sessionId: 'new' })
  assert.deepEqual((await allAfter(s, 0)).map((e) => e.eventId), [2])
  await assert.rejects(build(t, { EVENTS_RETENTION_HOURS: '0' }), /EVENTS_RETENTION_HOURS/)
})
