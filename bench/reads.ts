/**
 * Reads under load: autocannon (its own process, 10 connections) against GET /api/health and
 * GET /api/sessions/{id}/sent-statuses with 500 stored statuses (see below how they are made), and
 * the same health answer from a bare Fastify app for calibration.
 */
import { SQLite as Database } from '../src/db/sqlite.js'
import { runBench, type Figure } from './lib/bench.js'
import { emulatorApi, linkSessions, poll, serviceApi } from './lib/clients.js'
import { autocannon, type CannonResult } from './lib/cannon.js'
import { cpuSeconds, freePort, ROOT, spawnNode } from './lib/procs.js'
import { join } from 'node:path'

/**
 * Copies every status of the session (and its viewers) `copies` times, each copy a minute older, with
 * its own message id, through a second connection to the service's database; keeps `total` rows.
 * Columns are taken from the table, so the copies are whatever the service stores.
 */
function copyStatuses (file: string, sessionId: string, copies: number, total: number): void {
  const db = new Database(file, { fileMustExist: true })
  try {
    db.pragma('busy_timeout = 5000')
    const columns = (db.prepare('select name from pragma_table_info(\'statuses\')').pluck().all() as string[]).filter((c) => c !== 'id')
    const changed: Record<string, string> = { message_id: 'message_id || \'-\' || @copy', created_at: 'created_at - @copy * 60000', content: 'content || \' #\' || @copy' }
    const copyStatus = db.prepare(`insert into statuses (${columns.join(', ')}) select ${columns.map((c) => changed[c] ?? c).join(', ')} from statuses where id = @id returning id`).pluck()
    const copyViewers = db.prepare('insert into viewers (status_id, viewer, number, jid, viewed_at, is_real) select @to, viewer, number, jid, viewed_at, is_real from viewers where status_id = @from')
    db.transaction(() => {
      const originals = db.prepare('select id from statuses where session_id = ? order by id').pluck().all(sessionId) as number[]
      let rows = originals.length
      for (let copy = 1; copy <= copies; copy++) {
        for (const id of originals) {
          if (rows >= total) return
          const newId = copyStatus.get({ id, copy }) as number
          copyViewers.run({ from: id, to: newId })
          rows++
        }
      }
    })()
  } finally {
    db.close()
  }
}

/** req/s of the same health answer from a bare Fastify app, same autocannon settings */
async function bareFastify (dir: string, seconds: number): Promise<CannonResult & { cpuPerRequest: number }> {
  const port = await freePort()
  let ready: () => void = () => undefined
  const started = new Promise<void>((resolve) => { ready = resolve })
  const proc = spawnNode(join(ROOT, 'bench', 'lib', 'bare-fastify.ts'), {
    env: { PORT: String(port) },
    logFile: join(dir, 'bare-fastify.log'),
    onStdoutLine: (line) => { if (line === 'ready') ready() }
  })
  try {
    await Promise.race([started, proc.exited.then(() => { throw new Error(`bare Fastify exited:\n${proc.tail()}`) })])
    const cpu0 = cpuSeconds(proc.pid)
    const r = await autocannon(`http://127.0.0.1:${port}/api/health`, seconds, 10)
    return { ...r, cpuPerRequest: (cpuSeconds(proc.pid) - cpu0) / Math.max(1, r.requests.total) * 1e6 }
  } finally {
    await proc.stop(2000)
  }
}

await runBench('reads', 180_000, async ({ smoke, dir, log, emulator, service }) => {
  const statuses = smoke ? 20 : 500
  const seconds = smoke ? 1 : 10
  const svc = await service()
  const emu = emulatorApi((await emulator()).controlUrl)
  const api = serviceApi(svc.base)
  await linkSessions(api, emu, [{ sessionId: 'reader', number: '15555000001' }])
  const contacts = (await emu.addContacts(4, '4473')).map((c) => c.number)

  // 10 statuses go through the API and real Baileys (two recipients each, five with two viewers);
  // SQL then copies them to `statuses` rows in all (sending 500 would take half a minute of Baileys'
  // pure-JS sender-key signatures, which is not what this figure is about)
  const t0 = performance.now()
  const sent = Math.min(10, statuses)
  for (let i = 0; i < sent; i++) {
    const targets = [contacts[i % 4], contacts[(i + 1) % 4]]
    const status = await api.post<{ platformMessageId: string }>('/sessions/reader/send-status', {
      type: 'text', content: `status ${i}: ${'lorem ipsum '.repeat(4)}`, targetNumbers: targets.join(',')
    })
    if (i % 2 === 0) await emu.sendViews(status.platformMessageId, targets)
  }
  await poll(async () => (await api.get<Array<{ viewerCount: number }>>('/sessions/reader/sent-statuses'))
    .reduce((n, s) => n + s.viewerCount, 0) === 2 * Math.ceil(sent / 2), 10_000, 'the views to be recorded')
  copyStatuses(join(svc.dataDir, 'status-tracker.db'), 'reader', Math.ceil(statuses / sent) - 1, statuses)
  const listed = await api.get<Array<{ viewerCount: number }>>('/sessions/reader/sent-statuses')
  if (listed.length !== statuses) throw new Error(`listed ${listed.length} statuses, expected ${statuses}`)
  const listBytes = Buffer.byteLength(JSON.stringify({ success: true, data: listed }))
  log(`${statuses} statuses stored in ${((performance.now() - t0) / 1000).toFixed(1)} s; the list answer is ${(listBytes / 1024).toFixed(0)} KiB`)

  const figures: Figure[] = []
  for (const [key, path, minRps] of [['health', '/api/health', 10_000], ['list', '/api/sessions/reader/sent-statuses', 3000]] as const) {
    const cpu0 = cpuSeconds(svc.pid)
    const r = await autocannon(`${svc.base}${path}`, seconds, 10)
    const cpuPerRequest = (cpuSeconds(svc.pid) - cpu0) / Math.max(1, r.requests.total) * 1e6
    if (r.errors > 0 || r.non2xx > 0 || r.timeouts > 0) throw new Error(`${path}: ${r.errors} errors, ${r.non2xx} non-2xx, ${r.timeouts} timeouts`)
    log(`${path}: ${r.requests.average.toFixed(0)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, service CPU ${cpuPerRequest.toFixed(0)} µs per request`)
    const label = key === 'health' ? 'GET /api/health' : `GET …/sent-statuses (${statuses} statuses)`
    figures.push(
      { id: `reads.${key}.rps`, name: `${label}, 10 connections, ${seconds} s`, value: r.requests.average, unit: 'req/s', target: { op: '>=', value: minRps }, note: `${r.requests.total} requests, ${(r.throughput.average / 1024 / 1024).toFixed(1)} MiB/s; service CPU ${cpuPerRequest.toFixed(0)} µs per request` },
      { id: `reads.${key}.p99`, name: `${label} p99 latency`, value: r.latency.p99, unit: 'ms', target: { op: '<', value: 10 }, note: `p50 ${r.latency.p50} ms, max ${r.latency.max} ms` }
    )
  }
  const bare = await bareFastify(dir, Math.min(seconds, 5))
  log(`bare Fastify: ${bare.requests.average.toFixed(0)} req/s, p99 ${bare.latency.p99} ms, CPU ${bare.cpuPerRequest.toFixed(0)} µs per request`)
  figures.push({
    id: 'reads.bare.rps',
    name: `calibration: bare Fastify 5 app, same health answer, ${Math.min(seconds, 5)} s`,
    value: bare.requests.average,
    unit: 'req/s',
    note: `p99 ${bare.latency.p99} ms, CPU ${bare.cpuPerRequest.toFixed(0)} µs per request; no logger, plugins, hooks, auth or rate limit: what this machine allows`
  })
  return figures
})
