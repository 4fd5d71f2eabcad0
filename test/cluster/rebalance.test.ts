import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import pg from 'pg'
import { startEmulator, testCertPaths, type Emulator } from '@status-tracker/emulator'
import { waitFor } from '../helper.js'
import { startPostgres } from '../support/postgres.js'
import { skipWithoutRedis, startRedis } from '../support/redis.js'
import { CLUSTER_KEY, nodeApi, ownership, planNode, startNode } from './nodes.js'

// Three nodes (real processes) on one PostgreSQL and one Redis, real Baileys against the emulator. Two nodes
// hold six linked sessions under a stream of view receipts; a third joins
// and is handed its share one session at a time (REBALANCE_BATCH=1); then it is SIGKILLed and its sessions open on
// the other two; then one of those stops cleanly and hands its sessions to the last. Throughout, every receipt is
// stored once and the emulator never saw a login replace another one (two owners of one account at once).

const SESSIONS = 6
const CONTACTS = 900

/** No two connections of one linked device were ever open at once, and no login replaced an open one. */
function assertOneOwnerAtATime (emu: Emulator, numbers: string[]): void {
  assert.deepEqual(emu.replacedLogins(), [], 'no login replaced an open connection (440 conflict)')
  for (const number of numbers) {
    const conns = emu.ackStats(number).map((c) => ({ ...c, from: Date.parse(c.openedAt), to: c.closedAt === undefined ? Infinity : Date.parse(c.closedAt) }))
    for (const a of conns) {
      for (const b of conns) {
        if (a.connection < b.connection && a.device === b.device) assert.ok(a.to <= b.from, `${number}: connections ${a.connection} and ${b.connection} overlapped`)
      }
    }
  }
}

/** a metric's value summed over the series whose labels include `labels` */
async function metric (base: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${base}/metrics`, { headers: { 'x-api-key': CLUSTER_KEY } })).text()
  return text.split('\n').filter((l) => l.startsWith(name) && l.includes(labels)).reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0)
}

test('three nodes: a joining node gets its share under receipt load, a SIGKILLed one\'s sessions open on the others, a clean stop hands over; one owner at a time, no receipt lost', { skip: skipWithoutRedis, timeout: 540_000 }, async (t) => {
  const emu = await startEmulator({ tls: testCertPaths() })
  t.after(async () => { await emu.stop() })
  const postgres = await startPostgres()
  t.after(async () => { await postgres.stop() })
  const redis = await startRedis()
  t.after(async () => { await redis.stop() })
  const databaseUrl = await postgres.createDatabase()
  const dir = mkdtempSync(join(tmpdir(), 'st-rebalance-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  // the lease settings are the defaults (docs/cluster.md#failover): what the failover below runs on
  const env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    UPLOAD_DIR: join(dir, 'shared-uploads'),
    REBALANCE_BATCH: '1',
    // the moves' log lines are read below
    LOG_LEVEL: 'info',
    WA_WEBSOCKET_URL: emu.wsUrl,
    WA_TEST_TRUST_ROOT: emu.rootPublicKey,
    NODE_EXTRA_CA_CERTS: emu.caFile
  }
  const a = await startNode(t, await planNode(dir, 'node-a'), env)
  const b = await startNode(t, await planNode(dir, 'node-b'), env)
  const db = new pg.Client({ connectionString: databaseUrl })
  db.on('error', () => {}) // the server stops at the end
  await db.connect()
  t.after(async () => { await db.end() })

  const sessions = Array.from({ length: SESSIONS }, (_, i) => ({ sessionId: `r${i + 1}`, number: `1555810000${i + 1}`, via: i % 2 === 0 ? a : b }))
  for (const { sessionId, number, via } of sessions) {
    emu.createAccount(number)
    const api = nodeApi(via.base)
    await api.post('/sessions', { sessionId, sessionName: sessionId, authMethod: 'qrcode' })
    // (a 503 while the session is between owners is asked again)
    const qr = await waitFor(async () => (await api.call<{ qrCode: string | null }>('GET', `/sessions/${sessionId}/qr-code`)).data?.qrCode, 30_000, `QR of ${sessionId}`)
    await emu.scan(number, qr)
    await waitFor(async () => (await api.call<{ connected: boolean }>('GET', `/sessions/${sessionId}/connection-status`)).data?.connected, 30_000, `${sessionId} connected`)
  }
  const numbers = sessions.map((s) => s.number)
  const allOpen = async (base: string): Promise<boolean> => (await nodeApi(base).get<Array<{ connected: boolean }>>('/sessions')).every((s) => s.connected)
  const contacts = emu.addContacts(CONTACTS, { prefix: '4476' }).map((c) => c.number)
  await waitFor(async () => await allOpen(a.base), 30_000, 'every session open')
  // one status per session (two recipients; the views below are forced, as a large audience's would come)
  const statuses: Array<{ statusId: string, platformMessageId: string }> = []
  for (const { sessionId } of sessions) {
    const sent = await nodeApi(a.base).post<{ statusId: string, platformMessageId: string, state: string }>(`/sessions/${sessionId}/send-status`, { type: 'text', content: `from ${sessionId}`, targetNumbers: contacts.slice(0, 2).join(',') })
    assert.equal(sent.state, 'sent')
    statuses.push(sent)
  }

  // view receipts on every session's status, 2 viewers each every 200 ms, until told to stop (or out of contacts)
  let viewsSent = 0
  const stream = (): { stop: () => Promise<void> } => {
    let stopped = false
    const done = (async () => {
      while (!stopped && viewsSent < CONTACTS) {
        const viewers = contacts.slice(viewsSent, viewsSent + 2)
        await Promise.all(statuses.map(async (s) => await emu.sendViews(s.platformMessageId, { viewers, force: true })))
        viewsSent += viewers.length
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    })()
    return { stop: async () => { stopped = true; await done } }
  }
  const everyReceiptStored = async (why: string): Promise<void> => {
    const expected = viewsSent
    const counts = async (): Promise<number[]> => (await db.query<{ n: string }>(
      'select count(distinct v.viewer) as n from unnest($1::bigint[]) as s(id) left join viewers v on v.status_id = s.id group by s.id',
      [statuses.map((s) => Number(s.statusId))])).rows.map((r) => Number(r.n))
    await waitFor(async () => (await counts()).every((n) => n === expected), 60_000, `every receipt stored (${why})`)
    const { rows } = await db.query<{ n: string, d: string }>('select count(*) as n, count(distinct (status_id, viewer)) as d from viewers')
    assert.equal(rows[0].n, rows[0].d, 'each viewer stored once')
    assert.equal(Number(rows[0].n), expected * SESSIONS)
  }

  // 1. a third node joins under load: it is handed its share, one session on its way at a time
  const before = await ownership(a.base)
  assert.deepEqual([before['node-a'].length, before['node-b'].length], [3, 3])
  let load = stream()
  const joining = performance.now()
  // (a node started from source under load can take a while to answer)
  const c = await startNode(t, await planNode(dir, 'node-c'), env, { readyTimeoutMs: 180_000 })
  await waitFor(async () => {
    const owners = await ownership(c.base)
    return ['node-a', 'node-b', 'node-c'].every((n) => owners[n]?.length === 2) && await allOpen(c.base)
  }, 90_000, 'the spread even (2, 2, 2) and every session open')
  t.diagnostic(`join: even and open ${Math.round(performance.now() - joining)} ms after the third node started (batch 1)`)
  await load.stop()
  await everyReceiptStored('rebalance')
  assertOneOwnerAtATime(emu, numbers)
  const given = await metric(a.base, 'status_tracker_cluster_session_moves_total', 'reason="rebalance"') +
    await metric(b.base, 'status_tracker_cluster_session_moves_total', 'reason="rebalance"')
  assert.equal(given, 2, 'two sessions handed over, counted by the nodes that gave them')
  assert.equal(await metric(c.base, 'status_tracker_cluster_takeover_duration_seconds_count', 'how="handover"'), 2)
  assert.ok(a.output.concat(b.output).some((l) => l.includes('cluster: handed sessions over') && l.includes('"reason":"rebalance"')), 'moves logged with their reason')

  // 2. SIGKILL of the third node under load: its sessions open on the other two
  load = stream()
  await new Promise((resolve) => setTimeout(resolve, 500))
  c.child.kill('SIGKILL')
  const killed = performance.now()
  await c.exited
  await waitFor(async () => {
    const owners = await ownership(a.base)
    return (owners['node-a']?.length ?? 0) + (owners['node-b']?.length ?? 0) === SESSIONS && await allOpen(a.base)
  }, 60_000, 'every session open on A and B')
  const failover = performance.now() - killed
  t.diagnostic(`failover: the killed node's sessions open elsewhere ${Math.round(failover)} ms after the SIGKILL (target ≤ 10 s, measured in bench/scale-cluster.ts)`)
  // they came by failover (the lapsed leases taken over), not by a hand-over or as orphans
  assert.equal(await metric(a.base, 'status_tracker_cluster_takeover_duration_seconds_count', 'how="failover"') +
    await metric(b.base, 'status_tracker_cluster_takeover_duration_seconds_count', 'how="failover"'), SESSIONS / 3)
  await load.stop()
  await everyReceiptStored('failover')
  assertOneOwnerAtATime(emu, numbers)
  const owners = await ownership(a.base)
  assert.deepEqual([owners['node-a'].length, owners['node-b'].length], [3, 3], 'the failover spread them evenly')

  // 3. a clean stop (SIGTERM) hands B's sessions to A at once
  load = stream()
  const leaving = performance.now()
  assert.equal(await b.stop(10_000), 0)
  await waitFor(async () => (await ownership(a.base))['node-a']?.length === SESSIONS && await allOpen(a.base), 30_000, 'A to open B\'s sessions')
  t.diagnostic(`leave: B's sessions open on A ${Math.round(performance.now() - leaving)} ms after its SIGTERM`)
  await load.stop()
  await everyReceiptStored('leave')
  assertOneOwnerAtATime(emu, numbers)
  assert.ok(b.output.some((l) => l.includes('cluster: handed sessions over') && l.includes('"reason":"leave"')))
  assert.equal(await metric(a.base, 'status_tracker_cluster_takeover_duration_seconds_count', 'how="handover"'), 3)
})
