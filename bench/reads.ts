/**
 * Reads under load: autocannon (its own process, 10 connections) against GET /api/health and
 * GET /api/sessions/{id}/sent-statuses with 500 stored statuses (see below how they are made), on the
 * service and, in the same run, on the Express 5 + Baileys control (bench/lib/express-control.ts: the
 * same two answers from the same SQLite file), alternating A B B A so drifts in the machine's speed hit
 * both alike; the ratios are issue 14's targets. A bare Fastify app's health answer is the calibration.
 */
import { SQLite as Database } from '../src/db/sqlite.js'
import { runBench, type Figure } from './lib/bench.js'
import { combine, measure, startBareFastify, startExpressControl, type Load } from './lib/cannon.js'
import { emulatorApi, linkSessions, poll, serviceApi } from './lib/clients.js'
import { API_KEY } from './lib/procs.js'
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

/** The answer's `data` from either server (both use the service's envelope). */
async function data (base: string, path: string): Promise<unknown> {
  const res = await fetch(`${base}${path}`, { headers: { 'x-api-key': API_KEY }, signal: AbortSignal.timeout(30_000) })
  if (!res.ok) throw new Error(`${base}${path} → HTTP ${res.status}`)
  return ((await res.json()) as { data: unknown }).data
}

/** The keys of a JSON value, recursively (array items by their first), to compare two answers' shapes. */
function shape (value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])]
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, shape(v)]))
  return typeof value
}

const describe = (l: Load): string => `${Math.round(l.rps).toLocaleString('en-US')} req/s, p99 ${l.p99} ms, CPU ${l.cpuUs.toFixed(0)} µs per request`

await runBench('reads', 180_000, async ({ smoke, dir, log, emulator, service }) => {
  const statuses = smoke ? 20 : 500
  /** one autocannon run; each server gets two (A B B A), one in smoke mode */
  const seconds = smoke ? 1 : 5
  // the default log level: what a deployment runs
  const svc = await service({ env: { LOG_LEVEL: 'info' } })
  const emuProc = await emulator()
  const emu = emulatorApi(emuProc.controlUrl)
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
  const dbFile = join(svc.dataDir, 'status-tracker.db')
  copyStatuses(dbFile, 'reader', Math.ceil(statuses / sent) - 1, statuses)
  const listed = await api.get<Array<{ viewerCount: number }>>('/sessions/reader/sent-statuses')
  if (listed.length !== statuses) throw new Error(`listed ${listed.length} statuses, expected ${statuses}`)
  const listBytes = Buffer.byteLength(JSON.stringify({ success: true, data: listed }))
  log(`${statuses} statuses stored in ${((performance.now() - t0) / 1000).toFixed(1)} s; the list answer is ${(listBytes / 1024).toFixed(0)} KiB`)

  // the control: its own Baileys socket linked on the same emulator, the service's database read-only
  await emu.createAccount('15555000002')
  const control = await startExpressControl({
    dir, dbFile, baileys: { wsUrl: emuProc.wsUrl, rootPublicKey: emuProc.rootPublicKey, scan: async (qr) => { await emu.scan('15555000002', qr) } }
  })
  try {
    // the same work: the very same list, and a health answer of the same shape
    const path = { health: '/api/health', list: '/api/sessions/reader/sent-statuses' }
    const [theirs, ours] = [JSON.stringify(await data(control.base, path.list)), JSON.stringify(await data(svc.base, path.list))]
    if (theirs !== ours) throw new Error(`the control lists other statuses than the service:\n  control ${theirs.slice(0, 400)}\n  service ${ours.slice(0, 400)}`)
    if (JSON.stringify(shape(await data(control.base, path.health))) !== JSON.stringify(shape(await data(svc.base, path.health)))) throw new Error('the control\'s health answer has another shape than the service\'s')
    log('Express control linked; its answers match the service\'s')

    const figures: Figure[] = []
    for (const [key, minRps, minRatio] of [['health', 10_000, 2], ['list', 3000, 2.5]] as const) {
      const runs: { service: Load[], control: Load[] } = { service: [], control: [] }
      const order = smoke ? ['service', 'control'] as const : ['service', 'control', 'control', 'service'] as const
      for (const who of order) {
        const target = who === 'service' ? svc : control
        runs[who].push(await measure(target.pid, `${target.base}${path[key]}`, seconds))
      }
      const s = combine(runs.service)
      const c = combine(runs.control)
      log(`${path[key]}: service ${describe(s)}; Express control ${describe(c)}`)
      const label = key === 'health' ? 'GET /api/health' : `GET …/sent-statuses (${statuses} statuses)`
      const span = `10 connections, ${order.length / 2} × ${seconds} s`
      figures.push(
        { id: `reads.${key}.rps`, name: `${label}, ${span}`, value: s.rps, unit: 'req/s', target: { op: '>=', value: minRps }, note: `${s.total} requests, ${s.mibPerS.toFixed(1)} MiB/s; service CPU ${s.cpuUs.toFixed(0)} µs per request` },
        { id: `reads.${key}.p99`, name: `${label} p99 latency`, value: s.p99, unit: 'ms', target: { op: '<', value: 10 }, note: `p50 ${s.p50} ms, max ${s.max} ms (worst of the runs)` },
        {
          id: `reads.${key}.ratio`,
          name: `${label}: service ÷ Express + Baileys control, req/s`,
          value: s.rps / c.rps,
          unit: '×',
          target: { op: '>=', value: minRatio },
          note: `control ${describe(c)} (service ${(c.cpuUs / s.cpuUs).toFixed(1)}× less CPU per request); runs alternated ${order.map((w) => w[0].toUpperCase()).join(' ')}`
        }
      )
    }
    const bareProc = await startBareFastify(dir)
    let bare: Load
    try { bare = await measure(bareProc.pid, `${bareProc.base}/api/health`, seconds) } finally { await bareProc.stop(2000) }
    log(`bare Fastify: ${describe(bare)}`)
    figures.push({
      id: 'reads.bare.rps',
      name: `calibration: bare Fastify 5 app, same health answer, ${seconds} s`,
      value: bare.rps,
      unit: 'req/s',
      note: `p99 ${bare.p99} ms, CPU ${bare.cpuUs.toFixed(0)} µs per request; no logger, plugins, hooks, auth, rate limit or database: what this machine allows`
    })
    return figures
  } finally {
    await control.stop(3000)
  }
})
