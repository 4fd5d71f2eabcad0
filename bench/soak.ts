/**
 * Issue 41, the endurance run (`npm run bench -- soak`): a deployment's days compressed into an hour of wall time.
 *
 * The service (as `npm start` runs it, SQLite) with SOAK_SESSIONS (100) linked sessions runs for SOAK_MINUTES (60)
 * of wall time holding SOAK_DAYS (4) days: every clock it has is scaled through its settings
 * (bench/lib/soak-series.ts `compressedDayEnv`: STATUS_TTL_HOURS, CLEANUP_INTERVAL_MS, EVENTS_RETENTION_HOURS,
 * INSIGHTS_RETENTION_DAYS, WEBHOOK_RETENTION_HOURS, the webhook retry schedule), so statuses expire, insights
 * summaries are written and pruned, the event log and the webhook outbox are pruned, several times. Meanwhile:
 * - the emulator ends every session's stream every few minutes (SOAK_STREAM_END_S, 180 s): its control API's
 *   faults, `restart-required` (`<stream:error code="515">`) and `drop` (the connection cut) in turn;
 * - contacts post statuses: each session gets two a day (`POST /accounts/:n/contact-statuses`);
 * - the first session posts SOAK_STATUSES (20) statuses a day, each to 10 contacts and viewed by SOAK_VIEWERS
 *   (250) of them (the emulator's read receipts, `force`: no need to send to them all), liked by three and
 *   answered by one;
 * - a webhook to a receiver in this process that answers 500 to every third delivery.
 * Every sample (120 over the run) reads the service's RSS, its /metrics (heap, event-loop delay p99 since the last
 * sample, active handles), its open file descriptors and sockets (/proc), the database's used size (pages in use)
 * and its files' size. Apart from the samples, one `GET /api/health` and one `GET …/sent-statuses` of the posting
 * session are timed at a random moment of every 0.75 s (PROBE_SLOT_MS).
 *
 * Figures: the RSS slope over the last three quarters of the run (the last 45 minutes of 60) per 100 sessions;
 * receipts the service acked to the platform but did not store (after each status's views, once the emulator's
 * ledger holds no unacked stanza for that account, every viewer must be in `GET …/status-viewers/:id`); the p99
 * of both requests in the last sixth of the run (10 minutes of 60) ÷ in the first; the database's used size at
 * the end of the third day ÷ at the end of the first. Every series' slope is printed. It stops by itself.
 * BENCH_SMOKE=1: 3 sessions, 1 minute, 3 days of 20 s (test/bench/soak.test.ts). BENCH_HEAP=1: a heap snapshot at the
 * end of every day (bench/lib/bench.ts; each stops the service for seconds, so not a run for the figures).
 */
import { statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { SQLite as Database } from '../src/db/sqlite/driver.js'
import { HEAP, runBench, SMOKE, type Figure } from './lib/bench.js'
import { heapSnapshot, rssOf } from './lib/procs.js'
import { between, compressedDayEnv, floors, percentile, slopePerHour, type Point } from './lib/soak-series.js'
import { emulatorApi, linkSessions, serviceApi } from '../test/support/clients.js'
import { descriptorLinks } from '../test/support/processes.js'
import { API_KEY } from '../test/support/service.js'
import { sleep, waitFor } from '../test/support/wait.js'

const num = (name: string, def: number, smoke: number): number => Number(process.env[name] ?? (SMOKE ? smoke : def))
const MINUTES = num('SOAK_MINUTES', 60, 1)
const SESSIONS = num('SOAK_SESSIONS', 100, 3)
const DAYS = num('SOAK_DAYS', 4, 3)
const STATUSES_PER_DAY = num('SOAK_STATUSES', 20, 3)
const VIEWERS = num('SOAK_VIEWERS', 250, 30)
const STREAM_END_MS = num('SOAK_STREAM_END_S', 180, 20) * 1000
const CONTACT_STATUSES_PER_DAY = 2
const TARGETS = 10
const RUN_MS = MINUTES * 60_000
const DAY_MS = RUN_MS / DAYS
const SAMPLE_MS = Math.max(1000, RUN_MS / 120)
/**
 * One GET /api/health and one GET …/sent-statuses at a random moment of every slot of this long: 800 of each
 * in a 10-minute window. They sample time evenly, so a p99 is one request in a hundred, whatever moment the
 * soak's work falls on. Before, ten of each came back to back with every sample, every 30 s: every third
 * sample fell on a post (one every 45 s), and a window's p99 was its third-slowest of 200, set by those.
 */
const PROBE_SLOT_MS = Math.max(100, RUN_MS / 4800)
const MB = 1024 * 1024
/** minutes as a label: `45`, `0.75` */
const mins = (m: number): string => String(Number(m.toFixed(2)))

interface Sent { statusId: string, platformMessageId: string }
interface Series { rss: Point[], heapUsed: Point[], loopP99: Point[], handles: Point[], fds: Point[], sockets: Point[], dbUsed: Point[], dbFiles: Point[] }

const fds = (pid: number): { fds: number, sockets: number } => {
  const links = descriptorLinks(pid)
  return { fds: links.length, sockets: links.filter((l) => l?.startsWith('socket:') === true).length }
}

async function metrics (base: string): Promise<{ heapUsed: number, loopP99: number, handles: number }> {
  const res = await fetch(`${base}/metrics`, { headers: { 'x-api-key': API_KEY }, signal: AbortSignal.timeout(10_000) })
  const text = await res.text()
  const read = (name: string): number => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
  return { heapUsed: read('nodejs_heap_size_used_bytes'), loopP99: read('nodejs_eventloop_lag_p99_seconds') * 1000, handles: read('nodejs_active_handles_total') }
}

/** a webhook receiver that answers 500 to every third delivery */
async function receiver (): Promise<{ url: string, counts: { ok: number, failed: number }, close: () => void }> {
  const counts = { ok: 0, failed: 0 }
  let n = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const fail = ++n % 3 === 0
      if (fail) counts.failed++
      else counts.ok++
      res.writeHead(fail ? 500 : 204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const addr = server.address()
  if (addr === null || typeof addr === 'string') throw new Error('no receiver address')
  return { url: `http://127.0.0.1:${addr.port}/hook`, counts, close: () => { server.closeAllConnections(); server.close() } }
}

await runBench('soak', RUN_MS + 20 * 60_000, async ({ log, emulator, service, dir, heapDir }) => {
  const clocks = compressedDayEnv(DAY_MS)
  log(`${SESSIONS} sessions, ${MINUTES} min holding ${DAYS} days of ${(DAY_MS / 60_000).toFixed(2)} min; settings ${JSON.stringify(clocks)}`)
  const hook = await receiver()
  const svc = await service({ env: { ...clocks, ALLOW_PRIVATE_URLS: 'true' }, profile: false })
  const emuProc = await emulator()
  const emu = emulatorApi(emuProc.controlUrl)
  const api = serviceApi(svc.base)
  const ctl = async (path: string, body: unknown): Promise<void> => {
    const res = await fetch(`${emuProc.controlUrl}${path}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(60_000) })
    if (!res.ok) throw new Error(`POST ${path} → ${res.status}: ${(await res.text()).slice(0, 200)}`)
  }
  const sessions = Array.from({ length: SESSIONS }, (_, i) => ({ sessionId: `soak-${i}`, number: `15558${String(i).padStart(6, '0')}` }))
  const linkStart = performance.now()
  await linkSessions(api, emu, sessions, 8)
  log(`${SESSIONS} sessions linked in ${((performance.now() - linkStart) / 1000).toFixed(1)} s`)
  const contacts = (await emu.addContacts(VIEWERS + TARGETS, '4472')).map((c) => c.number)
  await api.post('/webhooks', { url: hook.url, description: 'soak receiver (fails a third)' })
  const poster = sessions[0]
  const db = new Database(join(svc.dataDir, 'status-tracker.db'), { readonly: true, fileMustExist: true })
  const dbUsed = (): number => (Number(db.pragma('page_count', { simple: true })) - Number(db.pragma('freelist_count', { simple: true }))) * Number(db.pragma('page_size', { simple: true }))
  const dbFiles = (): number => ['', '-wal', '-shm'].reduce((s, ext) => { try { return s + statSync(join(svc.dataDir, `status-tracker.db${ext}`)).size } catch { return s } }, 0)

  const start = performance.now()
  const endAt = start + RUN_MS
  const now = (): number => performance.now() - start
  const running = (): boolean => performance.now() < endAt
  const series: Series = { rss: [], heapUsed: [], loopP99: [], handles: [], fds: [], sockets: [], dbUsed: [], dbFiles: [] }
  const latency = { health: [] as Point[], list: [] as Point[] }
  const tally = { posts: 0, receipts: 0, lost: 0, unsettled: 0, contactStatuses: 0, streamEnds: 0, errors: 0, non2xx: 0 }
  const dayEnds: Array<{ used: number, files: number }> = []
  /** when each post began (ms since the start): what a slow probe is set beside */
  const postsAt: number[] = []
  const fail = (what: string) => (err: unknown): void => { tally.errors++; log(`${what}: ${err instanceof Error ? err.message : String(err)}`) }

  const probe = async (kind: 'health' | 'list', url: string): Promise<void> => {
    const t0 = performance.now()
    const res = await fetch(url, { headers: { 'x-api-key': API_KEY }, signal: AbortSignal.timeout(30_000) })
    await res.arrayBuffer()
    latency[kind].push({ t: now(), v: performance.now() - t0 })
    if (!res.ok) tally.non2xx++
  }
  const sample = async (): Promise<void> => {
    const t = now()
    const m = await metrics(svc.base)
    const f = fds(svc.pid)
    const add = (k: keyof Series, v: number): void => { series[k].push({ t, v }) }
    add('rss', rssOf(svc.pid) / MB); add('heapUsed', m.heapUsed / MB); add('loopP99', m.loopP99); add('handles', m.handles)
    add('fds', f.fds); add('sockets', f.sockets); add('dbUsed', dbUsed() / MB); add('dbFiles', dbFiles() / MB)
  }
  const probes = async (): Promise<void> => {
    // a random moment of the slot (the next slot starts on time: every() catches up without piling up)
    await sleep(Math.random() * PROBE_SLOT_MS * 0.9)
    await probe('health', `${svc.base}/api/health`)
    await probe('list', `${svc.base}/api/sessions/${poster.sessionId}/sent-statuses`)
  }
  /** runs `fn` every `everyMs` (from the start, catching up without piling up) until the end */
  const every = async (everyMs: number, what: string, fn: (i: number) => Promise<void>): Promise<void> => {
    for (let i = 0; running(); i++) {
      const at = start + i * everyMs
      if (at >= endAt) break
      if (at > performance.now()) await sleep(at - performance.now())
      await fn(i).catch(fail(what))
    }
  }

  const post = async (i: number): Promise<void> => {
    postsAt.push(now())
    const sent = await api.post<Sent>(`/sessions/${poster.sessionId}/send-status`, { type: 'text', content: `soak status ${i}`, targetNumbers: contacts.slice(0, TARGETS).join(',') })
    tally.posts++
    const viewers = contacts.slice(TARGETS, TARGETS + VIEWERS)
    await emu.sendViews(sent.platformMessageId, viewers, { force: true })
    tally.receipts += viewers.length
    await ctl(`/statuses/${sent.platformMessageId}/replies`, { from: viewers[0], text: 'nice', force: true })
    for (const from of viewers.slice(1, 4)) await ctl(`/statuses/${sent.platformMessageId}/reactions`, { from, emoji: '❤️', force: true })
    // acked to the platform → stored: once the emulator holds nothing unacked for the poster, every view is listed
    const settled = await waitFor(async () => await emu.unacked([poster.number]) === 0, 60_000, 'the poster acked everything', 100).then(() => true, () => false)
    const stored = (await api.get<Array<{ isReal: boolean }>>(`/sessions/${poster.sessionId}/status-viewers/${sent.statusId}`)).filter((v) => v.isReal).length
    if (!settled) { tally.unsettled += viewers.length; log(`status ${i}: receipts still unacked after 60 s (${stored} of ${viewers.length} stored)`) } else if (stored < viewers.length) {
      tally.lost += viewers.length - stored
      log(`status ${i}: ${viewers.length - stored} receipts acked but not stored`)
    }
  }
  const contactStatus = async (i: number): Promise<void> => {
    const to = sessions[i % SESSIONS]
    await ctl(`/accounts/${to.number}/contact-statuses`, { from: contacts[i % contacts.length], text: `contact status ${i}` })
    tally.contactStatuses++
  }
  const endStream = async (i: number): Promise<void> => {
    const s = sessions[i % SESSIONS]
    // in turn per round: the server ends the stream (515), or the connection is cut
    await ctl(`/accounts/${s.number}/faults`, { kind: Math.floor(i / SESSIONS) % 2 === 0 ? 'restart-required' : 'drop' })
    tally.streamEnds++
  }
  /** BENCH_HEAP=1: what the heap holds at a day's end (compare two with bench/heap-diff.ts); it stops the service for seconds */
  const heapAtDayEnd = async (day: number): Promise<void> => { log(`heap snapshot at the end of day ${day}: ${await heapSnapshot(svc.pid, heapDir)}`) }
  const dayTimers = Array.from({ length: DAYS - 1 }, (_, k) => setTimeout(() => {
    dayEnds[k] = { used: dbUsed(), files: dbFiles() }
    log(`day ${k + 1} over: database ${(dayEnds[k].used / MB).toFixed(1)} MB in use, RSS ${(rssOf(svc.pid) / MB).toFixed(0)} MB; ${JSON.stringify(tally)}`)
    if (HEAP) heapAtDayEnd(k + 1).catch(fail('heap snapshot'))
  }, (k + 1) * DAY_MS))

  try {
    await Promise.all([
      every(SAMPLE_MS, 'sample', sample),
      every(PROBE_SLOT_MS, 'probe', probes),
      every(DAY_MS / STATUSES_PER_DAY, 'post', post),
      every(DAY_MS / (CONTACT_STATUSES_PER_DAY * SESSIONS), 'contact status', contactStatus),
      every(STREAM_END_MS / SESSIONS, 'stream end', endStream)
    ])
    dayEnds[DAYS - 1] = { used: dbUsed(), files: dbFiles() }
    await sample()
    if (HEAP) await heapAtDayEnd(DAYS)
  } finally {
    for (const t of dayTimers) clearTimeout(t)
    db.close()
    hook.close()
  }
  log(`${(now() / 60_000).toFixed(1)} min: ${JSON.stringify(tally)}; webhook receiver ${JSON.stringify(hook.counts)}; ${series.rss.length} samples`)

  const window = RUN_MS / 6
  const tailFrom = RUN_MS / 4
  const slopes = Object.fromEntries(Object.entries(series).map(([k, points]) => [k, slopePerHour(between(points as Point[], tailFrom, Infinity))]))
  const unitOf: Record<keyof Series, string> = { rss: 'MB', heapUsed: 'MB', loopP99: 'ms', handles: 'handles', fds: 'fds', sockets: 'sockets', dbUsed: 'MB', dbFiles: 'MB' }
  for (const k of Object.keys(series) as Array<keyof Series>) {
    const p = series[k]
    log(`${k}: first ${p[0]?.v.toFixed(1)}, last ${p[p.length - 1]?.v.toFixed(1)} ${unitOf[k]}; slope over the last ${mins(0.75 * MINUTES)} min ${slopes[k]?.toFixed(2) ?? 'n/a'} ${unitOf[k]}/h`)
  }
  // context beside the RSS figure (not its measure): the line through each 5-minute window's lowest sample
  // (a twelfth of the run), which the collections' sawtooth moves far less than a line through every sample
  const floorSlope = (k: keyof Series): number | null => slopePerHour(floors(between(series[k], tailFrom, Infinity), RUN_MS / 12))
  const floorSlopes = { rss: floorSlope('rss'), heapUsed: floorSlope('heapUsed') }
  log(`floors (each ${mins(MINUTES / 12)} min's lowest sample) over the last ${mins(0.75 * MINUTES)} min: rss ${floorSlopes.rss?.toFixed(2) ?? 'n/a'} MB/h, heapUsed ${floorSlopes.heapUsed?.toFixed(2) ?? 'n/a'} MB/h`)
  // every sample, kept with BENCH_KEEP=1 as probes.json is
  writeFileSync(join(dir, 'samples.json'), JSON.stringify(series))
  const p99 = (points: Point[], from: number, to: number): number | null => percentile(between(points, from, to).map((p) => p.v), 99)
  const ratio = (kind: 'health' | 'list'): { first: number | null, last: number | null, ratio: number | null } => {
    const first = p99(latency[kind], 0, window)
    const last = p99(latency[kind], RUN_MS - window, Infinity)
    return { first, last, ratio: first === null || last === null || first === 0 ? null : last / first }
  }
  const health = ratio('health')
  const list = ratio('list')
  // the slowest probes of each window, each with how long after a post began it came: whether the p99 is one
  // kind of moment; every probe and post time is in probes.json (BENCH_KEEP=1 keeps it)
  const slowest = (kind: 'health' | 'list', from: number, to: number): string => [...between(latency[kind], from, to)].sort((a, b) => b.v - a.v).slice(0, 3).map((p) => {
    const before = postsAt.filter((t) => t <= p.t)
    return `${p.v.toFixed(1)} ms at ${(p.t / 1000).toFixed(0)} s (${before.length === 0 ? 'before any post' : `${((p.t - before[before.length - 1]) / 1000).toFixed(1)} s after a post began`})`
  }).join(', ')
  for (const kind of ['health', 'list'] as const) log(`${kind}, slowest in the first ${mins(MINUTES / 6)} min: ${slowest(kind, 0, window)}; in the last: ${slowest(kind, RUN_MS - window, Infinity)}`)
  writeFileSync(join(dir, 'probes.json'), JSON.stringify({ latency, postsAt }))
  const rssSlope = slopes.rss === null ? null : slopes.rss * 100 / SESSIONS
  const db3 = dayEnds[2]
  const db1 = dayEnds[0]
  console.log(`SOAK_SUMMARY ${JSON.stringify({ minutes: MINUTES, sessions: SESSIONS, days: DAYS, samples: series.rss.length, slopes, floorSlopes, tally, webhooks: hook.counts, health, list, dayEnds })}`)
  const where = `${SESSIONS} sessions, ${MINUTES} min of wall time holding ${DAYS} days`
  const ms = (x: number | null): string => x === null ? 'n/a' : `${x.toFixed(1)} ms`
  const figures: Figure[] = [
    { id: 'soak.rss.slope', name: `soak: RSS slope over the last ${mins(0.75 * MINUTES)} min, per 100 sessions`, value: rssSlope, unit: 'MB/h', target: { op: '<', value: 1 }, note: `${where}; least squares over ${between(series.rss, tailFrom, Infinity).length} samples (through each ${mins(MINUTES / 12)} min's lowest: ${floorSlopes.rss === null ? 'n/a' : (floorSlopes.rss * 100 / SESSIONS).toFixed(2)} MB/h); heap ${slopes.heapUsed?.toFixed(2) ?? 'n/a'} MB/h, fds ${slopes.fds?.toFixed(1) ?? 'n/a'}/h, handles ${slopes.handles?.toFixed(1) ?? 'n/a'}/h` },
    { id: 'soak.receipts.lost', name: `soak: receipts acknowledged to the platform but not stored (of ${tally.receipts})`, value: tally.lost, unit: 'receipts', target: { op: '<=', value: 0 }, note: `${tally.posts} statuses; per status, once the emulator held nothing unacked for the poster, its viewers listed by the service; ${tally.unsettled} receipts not settled within 60 s` },
    { id: 'soak.health.p99-ratio', name: `soak: GET /api/health p99, last ${mins(MINUTES / 6)} min ÷ first`, value: health.ratio, unit: '×', target: { op: '<=', value: 1.2 }, note: `${ms(health.first)} → ${ms(health.last)}; one request at a random moment of every ${PROBE_SLOT_MS / 1000} s` },
    { id: 'soak.list.p99-ratio', name: `soak: GET …/sent-statuses p99, last ${mins(MINUTES / 6)} min ÷ first`, value: list.ratio, unit: '×', target: { op: '<=', value: 1.2 }, note: `${ms(list.first)} → ${ms(list.last)}; the posting session (up to ${STATUSES_PER_DAY} statuses of ${VIEWERS} views)` },
    { id: 'soak.db.ratio', name: 'soak: database size after the third compressed day ÷ after the first', value: db1 === undefined || db3 === undefined ? null : db3.used / db1.used, unit: '×', target: { op: '<=', value: 1.2 }, note: `pages in use ${db1 === undefined ? 'n/a' : (db1.used / MB).toFixed(1)} → ${db3 === undefined ? 'n/a' : (db3.used / MB).toFixed(1)} MB; files ${db1 === undefined ? 'n/a' : (db1.files / MB).toFixed(1)} → ${db3 === undefined ? 'n/a' : (db3.files / MB).toFixed(1)} MB` }
  ]
  return figures
}, 150_000)
