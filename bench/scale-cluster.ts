/**
 * Issue 33's cluster figures, on three local nodes (each its own process as `npm start` runs it) sharing one
 * PostgreSQL and one Redis where installed (private servers from the test harness), the lease settings at their defaults:
 *
 * 1. Join: two nodes hold N linked sessions (300; BENCH_SMOKE: 30); a third starts. Time from its start until the
 *    spread is even within one session per node and every session is open again; the spread then; and how many
 *    logins replaced an open one of the same device (the emulator's record: two owners at once), target 0.
 * 2. Failover: a status on some of the third node's sessions, read receipts streaming to them; SIGKILL of the third
 *    node; time until every session is owned by the other two and open; receipts stored ÷ sent, target all.
 *
 * `runCluster` measures inside a benchmark's context (bench/scale.ts runs it with the other scale figures);
 * `clusterFigures` turns its answer into the table's rows with their targets. Run alone:
 * `node --import tsx bench/scale-cluster.ts` (BENCH_CLUSTER_SESSIONS=N to choose N).
 *
 * To look into the failover: BENCH_CLUSTER_TRACE=1 logs leased / open every 50 ms after the SIGKILL;
 * BENCH_CLUSTER_LOG=info runs the nodes at that level and prints each survivor's claim → open times;
 * BENCH_CLUSTER_PROFILE=<dir> writes a CPU profile of node-a over the failover (an inspector's cost included);
 * BENCH_TAKEOVER=<n> sets SESSION_TAKEOVER_CONCURRENCY on the nodes.
 */
import { pathToFileURL } from 'node:url'
import pg from 'pg'
import { runBench, type BenchContext, type Figure } from './lib/bench.js'
import { cpuSeconds, type ServiceProc } from './lib/procs.js'
import { windowProfiler } from './lib/window-profile.js'
import assert from 'node:assert/strict'
import { emulatorApi, mapLimit, serviceApi, type EmulatorApi, type LinkSpec } from '../test/support/clients.js'
import { startPostgres } from '../test/support/postgres.js'
import { skipWithoutRedis, startRedis } from '../test/support/redis.js'
import { waitFor } from '../test/support/wait.js'

export interface ClusterResult {
  sessions: number
  /** the nodes shared a Redis (else PostgreSQL alone: no Redis installed outside CI) */
  redis: boolean
  /** s from the third node's start until even within one and every session open */
  joinSeconds: number
  /** most minus fewest sessions per node once even */
  joinSpread: number
  /** sessions handed over to the third node */
  joinMoved: number
  /** logins that replaced an open connection of the same device, over the whole run */
  doubleOwners: number
  /** s from the SIGKILL until every session is owned by a live node and open */
  failoverSeconds: number
  /** the killed node's sessions */
  failoverSessions: number
  receiptsSent: number
  /** sent and not stored 60 s after the stream ended */
  receiptsLost: number
}

interface ClusterView { nodes: Array<{ nodeId: string, sessions: string[] }> }

const RECEIPT_STATUSES = 10

/**
 * Links a QR session as a user would, through any node (it is created on the least loaded); a 503 while the session
 * is between owners (a busy node's safety stop) is asked again, and a QR code gone before the scan is read again.
 */
async function link (base: string, emu: EmulatorApi, { sessionId, number }: LinkSpec): Promise<void> {
  const api = serviceApi(base)
  await emu.createAccount(number)
  await api.post('/sessions', { sessionId, sessionName: sessionId, authMethod: 'qrcode' })
  const ask = async <T>(path: string): Promise<T | undefined> => await api.get<T>(path).catch(() => undefined)
  await waitFor(async () => {
    if ((await ask<{ connected: boolean }>(`/sessions/${sessionId}/connection-status`))?.connected === true) return true
    const qr = (await ask<{ qrCode: string | null }>(`/sessions/${sessionId}/qr-code`))?.qrCode
    if (typeof qr === 'string') await emu.scan(number, qr).catch(() => {})
    return false
  }, 120_000, `${sessionId} linked`, 250)
}

export async function runCluster (ctx: BenchContext, opts: { sessions?: number } = {}): Promise<ClusterResult> {
  const { log } = ctx
  const n = opts.sessions ?? Number(process.env.BENCH_CLUSTER_SESSIONS ?? (ctx.smoke ? 30 : 300))
  const postgres = await startPostgres()
  // Redis where its binary is (always under CI); else the nodes run on PostgreSQL alone, as bench/cluster.ts does
  // (leases, hand-overs and receipts do not go through Redis)
  const redis = skipWithoutRedis === false ? await startRedis() : null
  if (redis === null) log(`no Redis (${skipWithoutRedis}): the nodes run on PostgreSQL alone`)
  const nodes: ServiceProc[] = []
  const url = await postgres.createDatabase()
  const client = new pg.Client({ connectionString: url })
  try {
    client.on('error', () => {})
    await client.connect()
    const emuProc = await ctx.emulator()
    const emu = emulatorApi(emuProc.controlUrl)
    const replaced = async (): Promise<number> => (await (await fetch(`${emuProc.controlUrl}/replaced-logins`)).json() as unknown[]).length
    // BENCH_CLUSTER_PROFILE=<dir>: a CPU profile of node-a from the SIGKILL until every session is open again
    const profiler = await windowProfiler(process.env.BENCH_CLUSTER_PROFILE, (msg) => { log(`failover: node-a's ${msg}`) })
    const start = async (nodeId: string): Promise<ServiceProc> => {
      const svc = await ctx.service({ name: nodeId, nodeFlags: nodeId === 'node-a' ? profiler.nodeFlags : [], env: { ...(process.env.BENCH_TAKEOVER === undefined ? {} : { SESSION_TAKEOVER_CONCURRENCY: process.env.BENCH_TAKEOVER }), DATABASE_URL: url, ...(redis === null ? {} : { REDIS_URL: redis.url }), NODE_ID: nodeId, LOG_LEVEL: process.env.BENCH_CLUSTER_LOG ?? 'warn', RATE_LIMIT_MAX: '1000000' } })
      nodes.push(svc)
      return svc
    }
    const owners = async (base: string): Promise<Map<string, string[]>> =>
      new Map((await serviceApi(base).get<ClusterView>('/cluster')).nodes.map((x) => [x.nodeId, x.sessions]))
    const openCount = async (base: string): Promise<number> =>
      (await serviceApi(base).get<Array<{ connected: boolean }>>('/sessions')).filter((s) => s.connected).length

    const a = await start('node-a')
    await start('node-b')
    log(`linking ${n} sessions over two nodes`)
    const t0 = performance.now()
    const specs = Array.from({ length: n }, (_, i) => ({ sessionId: `c${i}`, number: `1555700${String(i).padStart(5, '0')}` }))
    await mapLimit(specs, 4, async (spec) => { await link(a.base, emu, spec) })
    log(`linked in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

    // 1. a third node joins
    const joinStart = performance.now()
    const c = await start('node-c')
    let spread = Infinity
    await waitFor(async () => {
      const counts = [...(await owners(a.base)).values()].map((s) => s.length)
      if (counts.length < 3) return false
      spread = Math.max(...counts) - Math.min(...counts)
      return spread <= 1 && counts.reduce((x, y) => x + y, 0) === n && await openCount(a.base) === n
    }, 300_000, 'the spread even and every session open', 250)
    const joinSeconds = (performance.now() - joinStart) / 1000
    const ofC = (await owners(a.base)).get('node-c') ?? []
    log(`join: even within ${spread} in ${joinSeconds.toFixed(1)} s, ${ofC.length} sessions on the third node`)

    // 2. receipts streaming to some of the third node's sessions, then SIGKILL
    const contacts = (await emu.addContacts(2000, '4479')).map((x) => x.number)
    const targets = ofC.slice(0, RECEIPT_STATUSES)
    const statuses = await mapLimit(targets, 4, async (sessionId) =>
      await serviceApi(a.base).post<{ statusId: string, platformMessageId: string }>(`/sessions/${sessionId}/send-status`, { type: 'text', content: 'failover', targetNumbers: contacts.slice(0, 2).join(',') }))
    let sent = 0
    let streaming = true
    const stream = (async () => {
      for (let i = 2; streaming && i + 5 <= contacts.length; i += 5) {
        const viewers = contacts.slice(i, i + 5)
        await Promise.all(statuses.map(async (s) => await emu.sendViews(s.platformMessageId, viewers, { force: true })))
        sent += viewers.length * statuses.length
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    })()
    await new Promise((resolve) => setTimeout(resolve, 2000))
    const cpuOf = (): number[] => [nodes[0].child.pid, nodes[1].child.pid, emuProc.child.pid].map((pid) => cpuSeconds(pid ?? 0))
    const { leasedSeconds, failoverSeconds, cpuUsed } = await profiler.around(a.pid, 'failover-node-a', async () => {
      const cpuBefore = cpuOf()
      c.child.kill('SIGKILL')
      const killed = performance.now()
      await c.exited
      // when the leases moved and when the sessions opened (as each owner reports it on its lease row: what
      // GET /sessions shows of other nodes' sessions): the two halves of the failover time. Read from the
      // database, not through node-a's API: listing 300 sessions every 100 ms cost node-a CPU in the middle of its takeover
      let leasedSeconds: number | undefined
      await waitFor(async () => {
        const { rows: [r] } = await client.query<{ leased: string, open: string }>(
          "select count(*) filter (where node_id <> 'node-c') as leased, count(*) filter (where node_id <> 'node-c' and status = 'open') as open from session_leases")
        if (process.env.BENCH_CLUSTER_TRACE !== undefined) log(`failover trace ${((performance.now() - killed) / 1000).toFixed(2)} s: leased ${r.leased}, open ${r.open}`)
        if (Number(r.leased) !== n) return false
        leasedSeconds ??= (performance.now() - killed) / 1000
        return Number(r.open) === n
      }, 120_000, 'every session open on the two others', 50)
      return { leasedSeconds, failoverSeconds: (performance.now() - killed) / 1000, cpuUsed: cpuOf().map((x, i) => (x - cpuBefore[i]).toFixed(1)) }
    })
    // and as the API says it, once (after the clock stopped: the call is the bench's, not the failover's)
    assert.equal(await openCount(a.base), n, 'GET /sessions shows every session open')
    log(`failover CPU s: node-a ${cpuUsed[0]}, node-b ${cpuUsed[1]}, emulator ${cpuUsed[2]}`)
    if (process.env.BENCH_CLUSTER_LOG !== undefined) {
      for (const node of [nodes[0], nodes[1]]) {
        const ms = node.lines.filter((l) => l.includes('came to this node is open') && l.includes('"how":"failover"')).map((l) => (JSON.parse(l) as { ms: number }).ms).sort((x, y) => x - y)
        log(`failover: ${node.lines.length} lines; takeovers claim → open ms: min ${ms[0]}, p50 ${ms[Math.floor(ms.length / 2)]}, max ${ms.at(-1)} (${ms.length})`)
      }
    }
    log(`failover: ${ofC.length} sessions leased by the others ${leasedSeconds?.toFixed(1) ?? '?'} s and open ${failoverSeconds.toFixed(1)} s after the SIGKILL`)
    await new Promise((resolve) => setTimeout(resolve, 2000))
    streaming = false
    await stream
    const stored = async (): Promise<number> => Number((await client.query<{ n: string }>(
      'select count(*) as n from viewers where status_id = any($1::bigint[])', [statuses.map((s) => Number(s.statusId))])).rows[0].n)
    await waitFor(async () => await stored() >= sent, 60_000, 'every receipt stored', 500).catch(() => {})
    const receiptsLost = sent - await stored()
    log(`receipts: ${sent} sent, ${receiptsLost} not stored`)
    return {
      sessions: n,
      redis: redis !== null,
      joinSeconds,
      joinSpread: spread,
      joinMoved: ofC.length,
      doubleOwners: await replaced(),
      failoverSeconds,
      failoverSessions: ofC.length,
      receiptsSent: sent,
      receiptsLost
    }
  } finally {
    for (const node of nodes) if (node.child.exitCode === null && node.child.signalCode === null) await node.stop(10_000)
    await client.end().catch(() => {})
    await redis?.stop()
    await postgres.stop()
  }
}

/** The table's rows, with issue 33's targets. */
export function clusterFigures (r: ClusterResult): Figure[] {
  const note = `three local nodes, PostgreSQL${r.redis ? ' + Redis' : ' (no Redis)'}, ${r.sessions} sessions, the lease and rebalance settings at their defaults (docs/cluster.md#failover); one machine`
  return [
    { id: 'scale.cluster.join.s', name: `third node joins: even within one (${r.joinMoved} of ${r.sessions} sessions moved)`, value: r.joinSeconds, unit: 's', target: { op: '<=', value: 60 }, note },
    { id: 'scale.cluster.join.spread', name: 'third node joins: most − fewest sessions per node', value: r.joinSpread, unit: 'sessions', target: { op: '<=', value: 1 }, note },
    { id: 'scale.cluster.double-owners', name: 'logins that replaced an open one (two owners)', value: r.doubleOwners, unit: 'logins', target: { op: '<=', value: 0 }, note },
    { id: 'scale.cluster.failover.s', name: `SIGKILL of one of three: its ${r.failoverSessions} sessions open elsewhere`, value: r.failoverSeconds, unit: 's', target: { op: '<=', value: 10 }, note },
    { id: 'scale.cluster.failover.lost', name: `receipts lost over the failover (of ${r.receiptsSent})`, value: r.receiptsLost, unit: 'receipts', target: { op: '<=', value: 0 }, note }
  ]
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runBench('scale-cluster', 900_000, async (ctx) => clusterFigures(await runCluster(ctx)))
}
