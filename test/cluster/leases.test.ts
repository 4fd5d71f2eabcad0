import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { pino } from 'pino'
import type { Database } from '../../src/db/database.js'
import { openPostgres } from '../../src/db/connection.js'
import { leasesOn } from '../../src/db/postgres/index.js'
import { LeaseKeeper, placeOrphans, planMoves } from '../../plugins/cluster/lease-keeper.js'
import { startPostgres } from '../support/postgres.js'
import { waitFor } from '../helper.js'
import { insertSession } from '../support/sessions.js'

// The lease keeper on a real PostgreSQL, with several keepers ("nodes") in this process. Their sockets are
// a shared ledger: a session started by one while another still holds it is a violation the test fails on.

const TTL = 1500
const RENEW = 300
const silent = pino({ level: 'silent' })

interface Ledger {
  holder: Map<string, string>
  violations: string[]
  /** session → [node, 'start' | 'stop', ms] in order */
  history: Array<[string, string, 'start' | 'stop', number]>
}

async function database (t: TestContext): Promise<{ url: string, open: () => Kysely<Database>, onClose: (close: () => Promise<void>) => void }> {
  const server = await startPostgres()
  const closers: Array<() => Promise<void>> = []
  const onClose = (close: () => Promise<void>): void => { closers.push(close) }
  // node:test runs a test's after-hooks in the order they were added, so one hook closes what was opened
  // (keepers, pools; last first) and only then stops the server, whose fast shutdown would otherwise end
  // a keeper's query in flight (57P01) under the test
  t.after(async () => {
    for (const close of closers.reverse()) await close().catch(() => {})
    await server.stop()
  })
  const url = await server.createDatabase()
  const open = (): Kysely<Database> => {
    const pool = new pg.Pool({ connectionString: url, max: 3 })
    // idle connections ended by the server's stop at the end
    pool.on('error', () => {})
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    onClose(async () => { await db.destroy() })
    return db
  }
  // the service's own schema, every migration
  const migrated = await openPostgres(url)
  await migrated.close()
  return { url, open, onClose }
}

function keeper (db: Kysely<Database>, nodeId: string, ledger: Ledger): LeaseKeeper {
  const leases = leasesOn(db)
  return new LeaseKeeper({
    leases,
    nodeId,
    url: `http://${nodeId}.invalid`,
    ttlMs: TTL,
    renewMs: RENEW,
    log: silent,
    moveBatch: 2,
    movable: (id) => ledger.holder.get(id) === nodeId,
    start: async (id) => {
      const other = ledger.holder.get(id)
      if (other !== undefined && other !== nodeId) ledger.violations.push(`${id} started on ${nodeId} while ${other} held it`)
      ledger.holder.set(id, nodeId)
      ledger.history.push([id, nodeId, 'start', performance.now()])
      // as the service does once the socket is open: the node's sessions on their way count against the batch until then
      await leases.reportStatus(id, nodeId, 'open')
    },
    stop: async (id) => {
      if (ledger.holder.get(id) === nodeId) ledger.holder.delete(id)
      ledger.history.push([id, nodeId, 'stop', performance.now()])
    }
  })
}

async function addSessions (db: Kysely<Database>, ids: string[]): Promise<void> {
  for (const [i, id] of ids.entries()) await insertSession(db, id, { createdAt: i + 1 })
}

async function owners (db: Kysely<Database>): Promise<Record<string, string[]>> {
  const leases = leasesOn(db)
  return Object.fromEntries((await leases.view(await leases.now())).map((n) => [n.nodeId, n.sessions]))
}

test('placement: least-loaded live node first, ties by name, the same on every node', () => {
  assert.deepEqual([...placeOrphans(['a', 'b', 'c', 'd'], [{ nodeId: 'n2', load: 0 }, { nodeId: 'n1', load: 1 }])],
    [['a', 'n2'], ['b', 'n1'], ['c', 'n2'], ['d', 'n1']])
  assert.equal(placeOrphans(['a'], []).size, 0)
})

test('rebalancing plan: even within one, the same on every node, at most a batch on its way to a node', () => {
  const nodes = [{ nodeId: 'a', load: 150, arriving: 0 }, { nodeId: 'b', load: 150, arriving: 0 }, { nodeId: 'c', load: 0, arriving: 0 }]
  // c may have 10 on their way: a (first by name among equals) gives them all this round, b waits its turn
  assert.deepEqual([...planMoves(nodes, 'a', 10)], [['c', 10]])
  assert.deepEqual([...planMoves(nodes, 'b', 10)], [])
  assert.deepEqual([...planMoves(nodes, 'c', 10)], [])
  // with room for all of them, each gives its surplus: 100 each
  assert.deepEqual([...planMoves(nodes, 'a', 1000)], [['c', 50]])
  assert.deepEqual([...planMoves(nodes, 'b', 1000)], [['c', 50]])
  // sessions already on their way count against the batch
  assert.deepEqual([...planMoves([{ nodeId: 'a', load: 150, arriving: 0 }, { nodeId: 'c', load: 8, arriving: 8 }], 'a', 10)], [['c', 2]])
  // even within one already: nothing moves; 301 over three is 101/100/100
  assert.deepEqual([...planMoves([{ nodeId: 'a', load: 101, arriving: 0 }, { nodeId: 'b', load: 100, arriving: 0 }, { nodeId: 'c', load: 100, arriving: 0 }], 'a', 10)], [])
  assert.deepEqual([...planMoves([{ nodeId: 'a', load: 102, arriving: 0 }, { nodeId: 'b', load: 99, arriving: 0 }, { nodeId: 'c', load: 100, arriving: 0 }], 'a', 10)], [['b', 1]])
  // one node: nothing to even out
  assert.equal(planMoves([{ nodeId: 'a', load: 5, arriving: 0 }], 'a', 10).size, 0)
})

test('leases on PostgreSQL: spread over live nodes, taken over after a node stops renewing, never held twice, rebalanced on return', { timeout: 60_000 }, async (t) => {
  const { open, onClose } = await database(t)
  const ledger: Ledger = { holder: new Map(), violations: [], history: [] }
  const dbA = open()
  const dbB = open()
  const a = keeper(dbA, 'node-a', ledger)
  const b = keeper(dbB, 'node-b', ledger)
  onClose(async () => { await a.halt(); await b.halt() })
  await a.begin()
  await b.begin()
  const ids = ['s1', 's2', 's3', 's4', 's5', 's6']
  await addSessions(dbA, ids)
  await waitFor(async () => a.running.size + b.running.size === 6, 10_000, 'every session owned')
  assert.equal(a.running.size, 3, 'spread evenly')
  assert.equal(b.running.size, 3)
  const ofA = [...a.running]

  // A's database goes away (its pool is destroyed: every query fails) while its process lives on: it must
  // end its sockets before its leases lapse, and B takes them over after they did
  await dbA.destroy()
  const lost = performance.now()
  await waitFor(() => b.running.size === 6, 15_000, 'B to own every session')
  const tookOver = performance.now() - lost
  t.diagnostic(`takeover ${Math.round(tookOver)} ms after A lost its database (TTL ${TTL} ms)`)
  assert.equal(a.running.size, 0, 'A ended its sockets')
  for (const id of ofA) {
    const stop = ledger.history.find(([s, n, what]) => s === id && n === 'node-a' && what === 'stop')
    const start = ledger.history.find(([s, n, what]) => s === id && n === 'node-b' && what === 'start')
    assert.ok(stop !== undefined && start !== undefined && stop[3] < start[3], `${id}: A stopped before B started`)
  }
  assert.deepEqual(ledger.violations, [])
  await a.halt()

  // A comes back (same node id): B hands it its share, two at a time, each stopped on B before A starts it
  const a2 = keeper(open(), 'node-a', ledger)
  onClose(async () => { await a2.halt() })
  await a2.begin()
  await waitFor(() => a2.running.size === 3 && b.running.size === 3, 10_000, 'the spread even again')
  const spread = await owners(dbB)
  assert.equal(spread['node-a'].length, 3)
  assert.equal(spread['node-b'].length, 3)
  assert.deepEqual(ledger.violations, [])
  for (const id of [...a2.running]) {
    const stop = ledger.history.findLast(([s, n, what]) => s === id && n === 'node-b' && what === 'stop')
    const start = ledger.history.findLast(([s, n, what]) => s === id && n === 'node-a' && what === 'start')
    assert.ok(stop !== undefined && start !== undefined && stop[3] < start[3], `${id}: B stopped before A started`)
  }
  // stays put once even
  await new Promise((resolve) => setTimeout(resolve, 3 * RENEW))
  assert.equal(a2.running.size, 3)
  await addSessions(dbB, ['s7'])
  await waitFor(() => a2.running.size + b.running.size === 7, 5000, 'the new session placed')

  // a clean stop hands the leases over at once: the other node opens them at its next round
  await b.halt()
  for (const id of [...b.running]) { ledger.holder.delete(id); b.running.delete(id) }
  await b.resign()
  const view = await owners(dbB)
  assert.equal(view['node-a']?.length, 7, 'every lease handed to A in the same step')
  await waitFor(() => a2.running.size === 7, 5000, 'A to open the sessions B handed over')
  assert.deepEqual(ledger.violations, [])
  await a2.halt()

  // the claim of a failover's share is one statement: of two nodes claiming the same sessions at once each
  // session goes to one; a lease that has not expired is never taken
  const race = Array.from({ length: 40 }, (_, i) => `r${i}`)
  await addSessions(dbB, race)
  const x = leasesOn(open())
  const y = leasesOn(open())
  const now = await x.now()
  const [gotX, gotY] = await Promise.all([x.claim(race, 'node-x', now, now + 60_000), y.claim([...race].reverse(), 'node-y', now, now + 60_000)])
  assert.equal(gotX.length + gotY.length, race.length, `each once: ${gotX.length} + ${gotY.length}`)
  assert.deepEqual([...gotX, ...gotY].sort(), [...race].sort())
  assert.deepEqual(await y.claim(gotX, 'node-y', now + 1, now + 60_000), [], 'a lease held is not taken')
  assert.deepEqual((await x.claim(gotY, 'node-x', now + 60_001, now + 120_000)).sort(), [...gotY].sort(), 'an expired one is')
})
