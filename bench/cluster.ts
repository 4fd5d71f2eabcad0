/**
 * Two nodes against one, measured in the same run on one PostgreSQL and one Redis (private servers from
 * the test harness), each node its own process as `npm start` runs it:
 *
 * 1. Health: autocannon (10 connections) on GET /api/health of one node; then two autocannons at once,
 *    one per node, summed.
 * 2. Receipts: one session per node, a status to three contacts, then a forced burst of N read receipts
 *    (the emulator's `force`: the viewers did not receive it, which changes nothing for the service);
 *    receipts/s = views counted in PostgreSQL / time from asking the emulator until the last one is stored.
 *
 * On one machine the nodes share its cores with PostgreSQL, Redis, the emulator and the load generators,
 * so two nodes show what the database and the cores allow, not what two machines would.
 */
import pg from 'pg'
import { runBench, type Figure } from './lib/bench.js'
import { autocannon } from './lib/cannon.js'
import { emulatorApi, HttpError, serviceApi, type EmulatorApi } from '../test/support/clients.js'
import { waitFor } from '../test/support/wait.js'
import type { ServiceProc } from './lib/procs.js'
import { startPostgres } from '../test/support/postgres.js'
import { skipWithoutRedis, startRedis } from '../test/support/redis.js'

interface Sent { statusId: string, platformMessageId: string }

/** A 503 (the session is between owners for a moment, and the answer says to ask again) is "not yet"; any other error fails. */
function notYet (err: unknown): undefined {
  if (err instanceof HttpError && err.status === 503) return undefined
  throw err
}

/** Links a QR session through `node`, where it is created (the node with the fewest sessions, ties by id). */
async function link (node: ServiceProc, emu: EmulatorApi, sessionId: string, number: string): Promise<void> {
  const api = serviceApi(node.base)
  await emu.createAccount(number)
  await api.post('/sessions', { sessionId, sessionName: sessionId, authMethod: 'qrcode' })
  const qr = await waitFor(async () => (await api.get<{ qrCode: string | null }>(`/sessions/${sessionId}/qr-code`).catch(notYet))?.qrCode, 60_000, `QR of ${sessionId}`, 50)
  await emu.scan(number, qr)
  await waitFor(async () => (await api.get<{ connected: boolean }>(`/sessions/${sessionId}/connection-status`).catch(notYet))?.connected, 60_000, `${sessionId} connected`, 100)
}

await runBench('cluster', 300_000, async ({ smoke, log, emulator, service }) => {
  const seconds = smoke ? 1 : 10
  const burst = smoke ? 200 : 5000
  const postgres = await startPostgres()
  // Redis where its binary is (always under CI); else the nodes run on PostgreSQL alone (no figure here needs
  // cross-node events), so the bench runs on a fresh machine too
  const redis = skipWithoutRedis === false ? await startRedis() : null
  if (redis === null) log(`no Redis (${skipWithoutRedis}): the nodes run on PostgreSQL alone`)
  const nodes: ServiceProc[] = []
  const clients: pg.Client[] = []
  try {
    const emu = emulatorApi((await emulator()).controlUrl)
    const contacts = (await emu.addContacts(burst * 2 + 3, '4478')).map((c) => c.number)

    /** one cluster of `count` nodes on a fresh database; the nodes reach each other only for forwarding, unused here */
    const cluster = async (name: string, count: number): Promise<{ nodes: ServiceProc[], viewers: (statusId: string) => Promise<number> }> => {
      const url = await postgres.createDatabase()
      const started: ServiceProc[] = []
      for (let i = 0; i < count; i++) {
        const svc = await service({ name: `${name}-${i}`, env: { DATABASE_URL: url, ...(redis === null ? {} : { REDIS_URL: redis.url }), NODE_ID: `${name}-${i}`, LOG_LEVEL: 'warn' } })
        started.push(svc)
        nodes.push(svc)
      }
      const client = new pg.Client({ connectionString: url })
      client.on('error', () => {})
      await client.connect()
      clients.push(client)
      const viewers = async (statusId: string): Promise<number> =>
        Number((await client.query<{ n: string }>('select count(*) as n from viewers where status_id = $1', [Number(statusId)])).rows[0].n)
      return { nodes: started, viewers }
    }

    const health = async (bases: string[]): Promise<number> => {
      const results = await Promise.all(bases.map(async (b) => await autocannon(`${b}/api/health`, seconds, 10)))
      for (const r of results) if (r.non2xx > 0 || r.errors > 0) throw new Error(`health answered ${r.non2xx} non-2xx, ${r.errors} errors`)
      return results.reduce((sum, r) => sum + r.requests.average, 0)
    }

    const receipts = async (c: { nodes: ServiceProc[], viewers: (statusId: string) => Promise<number> }, tag: string, offset: number): Promise<number> => {
      // one node after the other: sessions created on two nodes at once can both land on the same node (each
      // sees the other with none yet), and the share moved back meanwhile fails a send in flight
      const statuses: Array<{ node: ServiceProc, sent: Sent }> = []
      for (const [i, node] of c.nodes.entries()) {
        const sessionId = `${tag}-${i}`
        await link(node, emu, sessionId, `1555900${offset}${String(i).padStart(3, '0')}`)
        statuses.push({ node, sent: await serviceApi(node.base).post<Sent>(`/sessions/${sessionId}/send-status`, { type: 'text', content: tag, targetNumbers: contacts.slice(0, 3).join(',') }) })
      }
      const per = Math.floor(burst / c.nodes.length)
      const t0 = performance.now()
      await Promise.all(statuses.map(async ({ sent }, i) => {
        await emu.sendViews(sent.platformMessageId, contacts.slice(3 + i * per, 3 + (i + 1) * per), { force: true })
      }))
      for (const { sent } of statuses) await waitFor(async () => await c.viewers(sent.statusId) === per, 120_000, `${per} views stored`, 20)
      return (per * c.nodes.length) / ((performance.now() - t0) / 1000)
    }

    log('one node')
    const one = await cluster('one', 1)
    const healthOne = await health(one.nodes.map((n) => n.base))
    const receiptsOne = await receipts(one, 'one', 1)
    log(`one node: ${Math.round(healthOne)} health req/s, ${Math.round(receiptsOne)} receipts/s`)
    for (const n of one.nodes) await n.stop(10_000)

    log('two nodes')
    const two = await cluster('two', 2)
    const healthTwo = await health(two.nodes.map((n) => n.base))
    const receiptsTwo = await receipts(two, 'two', 2)
    log(`two nodes: ${Math.round(healthTwo)} health req/s, ${Math.round(receiptsTwo)} receipts/s`)

    const note = `PostgreSQL${redis === null ? ' (no Redis)' : ' + Redis'}, ${seconds} s of autocannon (10 connections per node); ${burst} forced read receipts over the nodes' sessions; one machine`
    const figures: Figure[] = [
      { id: 'cluster.health.one.rps', name: 'GET /api/health, one node (PostgreSQL)', value: healthOne, unit: 'req/s', note },
      { id: 'cluster.health.two.rps', name: 'GET /api/health, two nodes (summed)', value: healthTwo, unit: 'req/s', note },
      { id: 'cluster.receipts.one.rps', name: 'receipts committed, one node (PostgreSQL)', value: receiptsOne, unit: 'receipts/s', note },
      { id: 'cluster.receipts.two.rps', name: 'receipts committed, two nodes', value: receiptsTwo, unit: 'receipts/s', note }
    ]
    return figures
  } finally {
    for (const n of nodes) await n.stop(10_000)
    for (const c of clients) await c.end().catch(() => {})
    await redis?.stop()
    await postgres.stop()
  }
}, 180_000) // smoke mode: PostgreSQL, Redis and three nodes started one after the other, beside other test files
