/**
 * Reads under load: autocannon (its own process, 10 connections) against GET /api/health and
 * GET /api/sessions/{id}/sent-statuses with a linked session, 500 stored statuses and 20,000 stored views
 * (see below how they are made), on the service and, in the same run, on three controls, in alternating
 * rounds (A B C D D C B A) so drifts in the machine's speed hit all alike:
 * - the Express 5 + Baileys control doing the service's work per request (bench/lib/express-control.ts:
 *   the same two answers from the same SQLite file; issue 14's ratios);
 * - the plain peer a user would write for the seed (bench/lib/plain-peer.ts: Express + better-sqlite3,
 *   seed-shaped answers, simple queries, its own linked Baileys socket; issue 25's ratios);
 * - a bare Fastify app answering the service's health JSON behind the same key check
 *   (bench/lib/bare-fastify.ts).
 * Issue 34 retired these figures' targets (issues 14 and 25 set them): they measured a probe, not the
 * product. The figures stay, measured and compared, with no target.
 * Issue 41's figures, with targets: the list of a session with 3 statuses seen by 20,000, 5,000 and none
 * against the Express control (which counts each status's viewers per request, as the service did), and the
 * same list with 200,000 views against it with 20,000 (two more sessions, alternated on the same service).
 */
import { SQLite as Database } from '../src/db/sqlite/driver.js'
import { runBench, type Figure } from './lib/bench.js'
import { combine, measure, startBareFastify, startExpressControl, startPlainPeer, type Load } from './lib/cannon.js'
import { emulatorApi, linkSessions, serviceApi } from '../test/support/clients.js'
import { API_KEY } from '../test/support/service.js'
import { waitFor } from '../test/support/wait.js'
import { loadavg } from 'node:os'
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
    // the kept counts (migration 019) start at 0: the copied viewers' triggers count them
    const changed: Record<string, string> = {
      message_id: 'message_id || \'-\' || @copy', created_at: 'created_at - @copy * 60000', content: 'content || \' #\' || @copy',
      viewer_count: '0', reaction_count: '0', reply_count: '0'
    }
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

/**
 * Tops the session's stored views up to `total`, spread evenly over its statuses, through a second
 * connection to the service's database: each new row is a copy of a real viewer row of the session with
 * another number (so its columns are whatever the service stores).
 */
function addViews (file: string, sessionId: string, total: number): void {
  const db = new Database(file, { fileMustExist: true })
  try {
    db.pragma('busy_timeout = 5000')
    const ids = db.prepare('select id from statuses where session_id = ? order by id').pluck().all(sessionId) as number[]
    const sample = db.prepare('select v.* from viewers v join statuses s on s.id = v.status_id where s.session_id = ? limit 1').get(sessionId) as Record<string, unknown> | undefined
    if (sample === undefined || typeof sample.number !== 'string') throw new Error('no real viewer row to copy')
    const number = sample.number
    const columns = Object.keys(sample)
    const insert = db.prepare(`insert or ignore into viewers (${columns.join(', ')}) values (${columns.map((c) => `@${c}`).join(', ')})`)
    const count = db.prepare('select count(*) from viewers v join statuses s on s.id = v.status_id where s.session_id = ?').pluck()
    db.transaction(() => {
      let have = count.get(sessionId) as number
      for (let i = 0; have < total; i++) {
        const other = `4479${String(i).padStart(8, '0')}`
        const row: Record<string, unknown> = { ...sample, status_id: ids[i % ids.length] }
        for (const c of columns) if (typeof row[c] === 'string') row[c] = (row[c] as string).replaceAll(number, other)
        have += insert.run(row).changes
      }
    })()
  } finally {
    db.close()
  }
}

/**
 * Gives `to` copies of the `reach.length` newest statuses of `from` (through a second connection to the service's
 * database, columns taken from the table), the i-th seen by reach[i] viewers: copies of a real viewer row of
 * `from` with other numbers (issue 41: the list's cost must not depend on reach).
 */
function reachStatuses (file: string, from: string, to: string, reach: number[]): void {
  const db = new Database(file, { fileMustExist: true })
  try {
    db.pragma('busy_timeout = 5000')
    const columns = (db.prepare('select name from pragma_table_info(\'statuses\')').pluck().all() as string[]).filter((c) => c !== 'id')
    const changed: Record<string, string> = { session_id: '@to', message_id: 'message_id || \'-\' || @to', viewer_count: '0', reaction_count: '0', reply_count: '0' }
    const copy = db.prepare(`insert into statuses (${columns.join(', ')}) select ${columns.map((c) => changed[c] ?? c).join(', ')} from statuses where id = @id returning id`).pluck()
    const sample = db.prepare('select v.* from viewers v join statuses s on s.id = v.status_id where s.session_id = ? limit 1').get(from) as Record<string, unknown> | undefined
    if (sample === undefined || typeof sample.number !== 'string') throw new Error('no real viewer row to copy')
    const number = sample.number
    const names = Object.keys(sample)
    const insert = db.prepare(`insert into viewers (${names.join(', ')}) values (${names.map((c) => `@${c}`).join(', ')})`)
    db.transaction(() => {
      const newest = db.prepare('select id from statuses where session_id = ? order by created_at desc, id desc limit ?').pluck().all(from, reach.length) as number[]
      newest.forEach((id, i) => {
        const statusId = copy.get({ id, to }) as number
        for (let v = 0; v < reach[i]; v++) {
          const row: Record<string, unknown> = { ...sample, status_id: statusId }
          const other = `4478${String(v).padStart(8, '0')}`
          for (const c of names) if (typeof row[c] === 'string') row[c] = (row[c] as string).replaceAll(number, other)
          insert.run(row)
        }
      })
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
const ratioOf = (a: Load, b: Load): string => `${(a.rps / b.rps).toFixed(2)} ×`

await runBench('reads', 380_000, async ({ smoke, dir, log, emulator, service }) => {
  const statuses = smoke ? 20 : 500
  const views = smoke ? 200 : 20_000
  /** one autocannon run; each server gets two (A B B A), one in smoke mode */
  const seconds = smoke ? 1 : 5
  /** none in smoke mode, whose figures mean nothing (seven autocannon runs that only load the cores) */
  const WARM_UP_SECONDS = smoke ? 0 : 3
  // the default log level: what a deployment runs
  const svc = await service({ env: { LOG_LEVEL: 'info' } })
  const emuProc = await emulator()
  const emu = emulatorApi(emuProc.controlUrl)
  const api = serviceApi(svc.base)
  // `reach` and `wide`: three statuses each, seen by 20,000, 5,000 and none, and by 200,000, 5,000 and none
  await linkSessions(api, emu, [{ sessionId: 'reader', number: '15555000001' }, { sessionId: 'reach', number: '15555000004' }, { sessionId: 'wide', number: '15555000005' }])
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
  await waitFor(async () => (await api.get<Array<{ viewerCount: number }>>('/sessions/reader/sent-statuses'))
    .reduce((n, s) => n + s.viewerCount, 0) === 2 * Math.ceil(sent / 2), 10_000, 'the views to be recorded', 50)
  const dbFile = join(svc.dataDir, 'status-tracker.db')
  copyStatuses(dbFile, 'reader', Math.ceil(statuses / sent) - 1, statuses)
  const listed = await api.get<Array<{ viewerCount: number }>>('/sessions/reader/sent-statuses')
  if (listed.length !== statuses) throw new Error(`listed ${listed.length} statuses, expected ${statuses}`)
  const listBytes = Buffer.byteLength(JSON.stringify({ success: true, data: listed }))
  log(`${statuses} statuses stored in ${((performance.now() - t0) / 1000).toFixed(1)} s; the list answer is ${(listBytes / 1024).toFixed(0)} KiB`)

  addViews(dbFile, 'reader', views)
  const stored = await api.get<Array<{ viewerCount: number }>>('/sessions/reader/sent-statuses')
  const storedViews = stored.reduce((n, x) => n + x.viewerCount, 0)
  if (storedViews !== views) throw new Error(`the service counts ${storedViews} views, expected ${views}`)
  log(`${views.toLocaleString('en-US')} views stored`)
  const reach = smoke ? [200, 50, 0] : [20_000, 5_000, 0]
  const wide = [reach[0] * 10, ...reach.slice(1)]
  const t1 = performance.now()
  reachStatuses(dbFile, 'reader', 'reach', reach)
  reachStatuses(dbFile, 'reader', 'wide', wide)
  for (const [id, want] of [['reach', reach], ['wide', wide]] as const) {
    const counts = (await api.get<Array<{ viewerCount: number }>>(`/sessions/${id}/sent-statuses`)).map((x) => x.viewerCount)
    if (JSON.stringify(counts) !== JSON.stringify(want)) throw new Error(`${id} lists views ${counts.join(', ')}, expected ${want.join(', ')}`)
  }
  log(`sessions reach and wide: 3 statuses seen by ${reach.join(', ')} and ${wide.join(', ')} (${((performance.now() - t1) / 1000).toFixed(1)} s)`)

  // the controls: each with its own Baileys socket linked on the same emulator, the service's database read-only
  const scanner = (number: string) => async (qr: string): Promise<void> => { await emu.scan(number, qr) }
  const baileys = (number: string): { wsUrl: string, rootPublicKey: string, scan: (qr: string) => Promise<void> } =>
    ({ wsUrl: emuProc.wsUrl, rootPublicKey: emuProc.rootPublicKey, scan: scanner(number) })
  await emu.createAccount('15555000002')
  await emu.createAccount('15555000003')
  const stops: Array<() => Promise<unknown>> = []
  try {
    // the two controls start (and link) side by side: nothing is measured before both are up
    const [controlStart, peerStart] = await Promise.allSettled([
      startExpressControl({ dir, dbFile, baileys: baileys('15555000002') }),
      startPlainPeer({ dir, dbFile, baileys: baileys('15555000003') })
    ])
    for (const started of [controlStart, peerStart]) if (started.status === 'fulfilled') stops.push(async () => await started.value.stop(3000))
    if (controlStart.status === 'rejected') throw controlStart.reason
    if (peerStart.status === 'rejected') throw peerStart.reason
    const [control, peer] = [controlStart.value, peerStart.value]
    const path = { health: '/api/health', list: '/api/sessions/reader/sent-statuses', reach: '/api/sessions/reach/sent-statuses', wide: '/api/sessions/wide/sent-statuses' }
    const serviceHealth = await data(svc.base, path.health)
    const bare = await startBareFastify(dir, JSON.stringify({ success: true, data: serviceHealth }))
    stops.push(async () => await bare.stop(2000))

    // the same work: the very same list, and a health answer of the same shape; the peer's list is the
    // same statuses in the same order with the seed's fields, the bare app's health the service's
    for (const key of ['reach', 'list'] as const) {
      const [theirs, ours] = [JSON.stringify(await data(control.base, path[key])), JSON.stringify(await data(svc.base, path[key]))]
      if (theirs !== ours) throw new Error(`the control lists other statuses than the service:\n  control ${theirs.slice(0, 400)}\n  service ${ours.slice(0, 400)}`)
    }
    const ours = JSON.stringify(await data(svc.base, path.list))
    if (JSON.stringify(shape(await data(control.base, path.health))) !== JSON.stringify(shape(serviceHealth))) throw new Error('the control\'s health answer has another shape than the service\'s')
    const seedFields = ['id', 'type', 'content', 'caption', 'timestamp', 'platformMessageId', 'contactCount', 'targetNumbers'] as const
    const seedOf = (list: unknown): string => JSON.stringify((list as Array<Record<string, unknown>>).map((x) => seedFields.map((f) => x[f])))
    if (seedOf(await data(peer.base, path.list)) !== seedOf(JSON.parse(ours))) throw new Error('the plain peer lists other statuses than the service')
    if (JSON.stringify(shape(await data(bare.base, path.health))) !== JSON.stringify(shape(serviceHealth))) throw new Error('the bare Fastify app\'s health answer has another shape than the service\'s')
    log('controls linked; their answers match the service\'s')

    const servers = { service: svc, bare, peer, express: control }
    type Who = keyof typeof servers
    /** alternating rounds over the targets (a server and a URL each): their order, then backwards (one pass in smoke mode) */
    type Rounds<K extends string> = Record<K, Load> & { order: string, load: string, best: Record<K, number> }
    /** `passes`: how many times the order is run, every other one backwards */
    const alternate = async <K extends string>(key: string, targets: Record<K, { pid: number, url: string }>, passes = 2): Promise<Rounds<K>> => {
      const who = Object.keys(targets) as K[]
      const order = smoke ? who : Array.from({ length: passes }, (_, i) => i % 2 === 0 ? who : [...who].reverse()).flat()
      const runs = new Map<K, Load[]>()
      const loads: number[] = []
      // a warm-up run each, not counted: a first run just after the seeding and linking measured the JIT
      // and the controls' own start-up (their Baileys sockets syncing), not the steady state the figure is
      // about (bench/NOTES.md: the service's first health round 67–106 µs per request, its second 50 µs)
      for (const w of WARM_UP_SECONDS > 0 ? who : []) {
        const warm = await measure(targets[w].pid, targets[w].url, WARM_UP_SECONDS)
        log(`  ${key} ${w} warm-up (not counted): ${describe(warm)}`)
      }
      for (const w of order) {
        loads.push(loadavg()[0])
        const list = runs.get(w) ?? []
        const run = await measure(targets[w].pid, targets[w].url, seconds)
        log(`  ${key} ${w} round ${list.length + 1}: ${describe(run)}; 1-min load ${loads[loads.length - 1].toFixed(1)}`)
        list.push(run)
        runs.set(w, list)
      }
      const out = Object.fromEntries([...runs].map(([w, l]) => [w, combine(l)])) as Record<K, Load>
      const best = Object.fromEntries([...runs].map(([w, l]) => [w, Math.max(...l.map((x) => x.rps))])) as Record<K, number>
      return { ...out, best, order: order.join(' '), load: `1-min load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}` }
    }
    const rounds = async <W extends Who>(key: keyof typeof path, who: W[]): Promise<Rounds<W>> =>
      await alternate(key, Object.fromEntries(who.map((w) => [w, { pid: servers[w].pid, url: `${servers[w].base}${path[key]}` }])) as Record<W, { pid: number, url: string }>)

    const h = await rounds('health', ['service', 'bare', 'peer', 'express'])
    log(`${path.health}: service ${describe(h.service)}; bare Fastify ${describe(h.bare)}; plain peer ${describe(h.peer)}; Express control ${describe(h.express)}; ${h.load}`)
    const l = await rounds('list', ['service', 'peer', 'express'])
    log(`${path.list}: service ${describe(l.service)}; plain peer ${describe(l.peer)}; Express control ${describe(l.express)}; ${l.load}`)
    const r = await rounds('reach', ['service', 'express'])
    log(`${path.reach}: service ${describe(r.service)}; Express control ${describe(r.express)}; ${r.load}`)
    // the same service, the same list but for reach: alternated with the 20,000 one, three rounds each (W R R W W R,
    // so a steady drift of the machine's speed hits both alike; with two each, one round at a moment of heavier load
    // moved the ratio by 20 % at load 12, while their CPU per request stayed within 1 %)
    const w = await alternate('wide', { wide: { pid: svc.pid, url: `${svc.base}${path.wide}` }, reach: { pid: svc.pid, url: `${svc.base}${path.reach}` } }, 3)
    log(`${path.wide}: service ${describe(w.wide)}; the 20,000 one meanwhile ${describe(w.reach)}; ${w.load}`)

    const span = `10 connections, ${smoke ? 1 : 2} × ${seconds} s each`
    const listLabel = `GET …/sent-statuses (${statuses} statuses, ${views.toLocaleString('en-US')} views)`
    const cpu = (a: Load, b: Load, who: string): string => `CPU per request service ${a.cpuUs.toFixed(0)} µs, ${who} ${b.cpuUs.toFixed(0)} µs`
    // measured, with no target: the health and list request-rate targets are retired (issue 34: they
    // measured a probe, not the product; bench/NOTES.md)
    const figures: Figure[] = [
      { id: 'reads.health.rps', name: `GET /api/health, ${span}`, value: h.service.rps, unit: 'req/s', note: `${h.service.total} requests, service CPU ${h.service.cpuUs.toFixed(0)} µs per request; ${h.load}` },
      { id: 'reads.health.p99', name: 'GET /api/health p99 latency', value: h.service.p99, unit: 'ms', note: `p50 ${h.service.p50} ms, max ${h.service.max} ms (worst of the runs)` },
      {
        id: 'reads.health.bare-ratio',
        name: 'GET /api/health ÷ bare Fastify (same JSON, same key check, 10 connections), req/s',
        value: h.service.rps / h.bare.rps,
        unit: '×',
        note: `bare Fastify ${describe(h.bare)}; ${cpu(h.service, h.bare, 'bare')}; rounds ${h.order}; ${h.load}`
      },
      {
        id: 'reads.health.peer-ratio',
        name: `GET /api/health ÷ plain Express + better-sqlite3 peer (a linked session, ${views.toLocaleString('en-US')} stored views), req/s`,
        value: h.service.rps / h.peer.rps,
        unit: '×',
        note: `peer ${describe(h.peer)} (seed-shaped answer, nothing checked); ${cpu(h.service, h.peer, 'peer')}; rounds ${h.order}; ${h.load}`
      },
      {
        id: 'reads.health.ratio',
        name: 'GET /api/health ÷ Express + Baileys control (same work), req/s',
        value: h.service.rps / h.express.rps,
        unit: '×',
        note: `control ${describe(h.express)}; ${cpu(h.service, h.express, 'control')}; rounds ${h.order}`
      },
      { id: 'reads.list.rps', name: `${listLabel}, ${span}`, value: l.service.rps, unit: 'req/s', target: { op: '>=', value: 3000 }, note: `issue 41's target, without a response cache (bench/NOTES.md, "Issue 41": the answer is ~177 KB and this machine's floor is below it); ${l.service.total} requests, ${l.service.mibPerS.toFixed(1)} MiB/s; service CPU ${l.service.cpuUs.toFixed(0)} µs per request; ${l.load}` },
      { id: 'reads.list.p99', name: `${listLabel} p99 latency`, value: l.service.p99, unit: 'ms', note: `context; p50 ${l.service.p50} ms, max ${l.service.max} ms (worst of the runs)` },
      {
        id: 'reads.list.peer-ratio',
        name: `${listLabel} ÷ plain peer (same data), req/s`,
        value: l.service.rps / l.peer.rps,
        unit: '×',
        note: `context; peer ${describe(l.peer)}, ${l.peer.mibPerS.toFixed(1)} MiB/s (the seed's 8 fields; the service answers 15); ${cpu(l.service, l.peer, 'peer')}; rounds ${l.order}; ${l.load}`
      },
      {
        id: 'reads.list.ratio',
        name: `${listLabel} ÷ Express + Baileys control (same work), req/s`,
        value: l.service.rps / l.express.rps,
        unit: '×',
        note: `context; control ${describe(l.express)}; ${cpu(l.service, l.express, 'control')}; rounds ${l.order}`
      },
      {
        id: 'reads.reach.ratio',
        name: `GET …/sent-statuses, 3 statuses seen by ${reach.map((n) => n.toLocaleString('en-US')).join(', ')} ÷ Express + Baileys control (same data), req/s`,
        value: r.service.rps / r.express.rps,
        unit: '×',
        target: { op: '>=', value: 1.5 },
        note: `service ${describe(r.service)}; control ${describe(r.express)} (a count(*) per status each request, as the service did before issue 41); ${cpu(r.service, r.express, 'control')}; rounds ${r.order}; ${r.load}`
      },
      {
        id: 'reads.reach.wide-ratio',
        name: `the same list with ${wide[0].toLocaleString('en-US')} views ÷ with ${reach[0].toLocaleString('en-US')}, req/s`,
        value: w.wide.rps / w.reach.rps,
        unit: '×',
        target: { op: '>=', value: 0.9 },
        note: `CPU per request ${wide[0].toLocaleString('en-US')} ÷ ${reach[0].toLocaleString('en-US')}: ${(w.wide.cpuUs / w.reach.cpuUs).toFixed(2)} ×; best rounds ${Math.round(w.best.wide)} and ${Math.round(w.best.reach)} req/s; ${wide[0].toLocaleString('en-US')}: ${describe(w.wide)}; ` +
          `${reach[0].toLocaleString('en-US')}: ${describe(w.reach)}; the same service, two sessions' lists alternated (rounds ${w.order}); ${w.load}`
      },
      {
        id: 'reads.bare.rps',
        name: 'bare Fastify 5 app, the service\'s health JSON behind the key check',
        value: h.bare.rps,
        unit: 'req/s',
        note: `p99 ${h.bare.p99} ms, CPU ${h.bare.cpuUs.toFixed(0)} µs per request; no logger, plugins, hooks but the key check, rate limit or database: what this machine allows (${ratioOf(h.service, h.bare)})`
      }
    ]
    return figures
  } finally {
    for (const stop of stops.reverse()) await stop()
  }
// smoke mode links three sessions and four controls' worth of rounds: about 90 s at load 18
}, 150_000)
