/**
 * A fleet of linked sessions against as many bare Baileys sockets (issue 33), both on one emulator:
 *
 * - Memory per idle linked session at each N: the service (`node dist/src/server.js`, one socket.io
 *   client connected) and bare Baileys rc14 (bench/lib/bare-baileys.mjs: stock makeWASocket, one
 *   useMultiFileAuthState folder per socket, nothing done once open; at most BENCH_SCALE_BARE_PER_PROCESS
 *   = 100 sockets a process, bench/lib/bare-shards.ts says why) each link N accounts by QR
 *   through the emulator, eight at a time, each side waiting until all its N are open; the figure is the
 *   process's settled RSS (median of five samples 0.5 s apart, both at once, after a pause) growth from
 *   before the first link, ÷ N. Both baselines have Baileys loaded.
 * - Receipts spread over the N sessions: each session posts one text status to two emulator contacts
 *   (the service through its API, the bare sockets with sendMessage), then one `force` views call per
 *   status (VIEWS viewers each, sixteen calls at a time) makes the emulator write every read receipt as
 *   fast as it takes. The bare process is done when its events reported N × VIEWS distinct views and the
 *   emulator's ledger (POST /unacked over its N accounts) has nothing unacked; the service when SQLite
 *   holds every viewer, the `status-viewers-added` at a socket.io client counted them all, and its
 *   accounts have nothing unacked. One round each (bare first): the ratio is the two rates.
 * - Live p99 (service): 10 receipts every 10 ms for 5 s, one views call of ten viewers to the next
 *   status in turn (so spread over 500 sessions at N = 1,000, every session five times at N = 100); per
 *   receipt, the driver's request to the emulator until the first `status-viewers-added` naming that
 *   viewer (as bench/receipts.ts, part 2). The bare sockets are stopped before it (they have no part in it).
 *
 * Linking is bounded by BENCH_SCALE_FLEET_MS (default 40 min, both sides) and stops when a bare socket
 * cannot be linked (three tries): short of an N, the memory figures of that N are not measured and the
 * receipts run over the sessions both sides reached in full steps.
 */
import { join } from 'node:path'
import { createHistogram } from 'node:perf_hooks'
import { SQLite as Database } from '../src/db/sqlite/driver.js'
import type { BenchContext, Figure } from './lib/bench.js'
import { startBareShards } from './lib/bare-shards.js'
import { cpuSeconds, settledRss } from './lib/procs.js'
import { windowProfiler } from './lib/window-profile.js'
import { connectedCount, connectSocket, emulatorApi, linkSessions, mapLimit, serviceApi } from '../test/support/clients.js'
import { sleep, waitFor } from '../test/support/wait.js'

const MB = 1024 ** 2
const BUDGET_MS = Number(process.env.BENCH_SCALE_FLEET_MS ?? 40 * 60_000)
/** viewers of each status in the burst */
const VIEWS = 20
const PACED_RATE = 1000
/** bare sockets per control process (bench/lib/bare-shards.ts) */
const PER_PROCESS = Number(process.env.BENCH_SCALE_BARE_PER_PROCESS ?? 100)

export interface FleetRun {
  /** N → bytes of RSS growth per session (service) and per socket (bare) */
  memory: Map<number, { service: number, bare: number }>
  sessions: number
  burst: { receipts: number, service: number, bare: number, log: string }
  paced: { receipts: number, p50: number, p99: number, max: number, cpu: string }
}

interface Added { sessionId: string, statusId: string, viewerCount: number, viewers: Array<{ number: string | null }> }

const serviceNumber = (i: number): string => `15570${String(i).padStart(6, '0')}`
const bareNumber = (i: number): string => `15571${String(i).padStart(6, '0')}`

export async function runFleet (ctx: BenchContext, ns: number[]): Promise<FleetRun> {
  const { log } = ctx
  const deadline = performance.now() + BUDGET_MS
  const pauseMs = ctx.smoke ? 500 : 5000
  const emuProc = await ctx.emulator()
  const emu = emulatorApi(emuProc.controlUrl)
  // a data folder of its own: the `start` part leaves its stored sessions in the default one
  // BENCH_FLEET_PROFILE=<dir>: CPU profiles of the service over the burst and over the paced run alone
  const profiler = await windowProfiler(process.env.BENCH_FLEET_PROFILE, (msg) => { log(`fleet: ${msg}`) })
  const svc = await ctx.service({ name: 'service-fleet', env: { DATA_DIR: join(ctx.dir, 'data-fleet') }, profile: false, nodeFlags: profiler.nodeFlags })
  const profiled = async <T>(name: string, work: () => Promise<T>): Promise<T> => await profiler.around(svc.pid, name, work)
  const api = serviceApi(svc.base)
  const socket = await connectSocket(svc.base)
  let dropped: string | null = null
  socket.on('disconnect', (reason) => { dropped = reason })
  const connected = (): void => { if (dropped !== null) throw new Error(`the socket.io client was disconnected (${dropped})`) }
  const top = ns[ns.length - 1]
  const bare = await startBareShards({ dir: join(ctx.dir, 'bare-fleet'), wsUrl: emuProc.wsUrl, rootPublicKey: emuProc.rootPublicKey, emu }, top, PER_PROCESS)
  try {
    await sleep(pauseMs)
    const samples = ctx.smoke ? 2 : 5
    /** the service's settled RSS and the control's (its processes' summed), sampled at once */
    const rss = async (): Promise<[number, number]> => {
      const [service, ...control] = (await Promise.all([svc.pid, ...bare.pids].map(async (pid) => await settledRss(pid, samples, 500)))).map((r) => r.median)
      return [service, control.reduce((a, b) => a + b, 0)]
    }
    const [svc0, bare0] = await rss()
    log(`fleet: idle RSS service ${(svc0 / MB).toFixed(0)} MB, bare ${(bare0 / MB).toFixed(0)} MB`)
    const memory = new Map<number, { service: number, bare: number }>()
    /** idle and linked means open: a bare socket that missed a keep-alive while the process was busy reconnects */
    const allOpen = async (n: number): Promise<void> => {
      await waitFor(async () => await connectedCount(api) >= n && bare.openCount() >= n, 300_000, `${n} sessions and ${n} bare sockets open`, 200)
    }
    let linked = 0
    /** why linking stopped short (a bare socket that would not link: its process too busy for Baileys' timeouts) */
    let failed: string | undefined
    for (const n of ns) {
      // in steps of 50 on each side, so the budget is kept between steps (a bare step of 50 at 300 takes minutes)
      while (linked < n && performance.now() < deadline && failed === undefined) {
        const to = Math.min(n, linked + 50)
        const t0 = performance.now()
        await linkSessions(api, emu, range(linked, to).map((i) => ({ sessionId: `fleet-${i}`, number: serviceNumber(i) })), 8)
        const t1 = performance.now()
        const specs = range(linked, to).map((i) => ({ id: String(i), number: bareNumber(i) }))
        failed = await bare.link(specs, 8).then(() => undefined, (err: unknown) => String(err))
        if (failed !== undefined) break
        log(`fleet: ${to} linked (this step: service ${((t1 - t0) / 1000).toFixed(1)} s, bare ${((performance.now() - t1) / 1000).toFixed(1)} s)`)
        linked = to
      }
      if (linked < n) { log(`fleet: linking stopped at ${linked} of ${n}: ${failed ?? 'out of budget'}`); break }
      await allOpen(linked)
      await sleep(pauseMs)
      const [s, b] = await rss()
      memory.set(n, { service: (s - svc0) / n, bare: (b - bare0) / n })
      log(`fleet: N = ${n}: RSS service ${(s / MB).toFixed(0)} MB (${((s - svc0) / n / MB).toFixed(2)} MB each), bare ${(b / MB).toFixed(0)} MB (${((b - bare0) / n / MB).toFixed(2)} MB each)`)
    }

    // ---- receipts over every linked session
    const n = linked
    await allOpen(n)
    // one views call of ten every 10 ms, to the next status in turn
    const pacedCalls = Math.round(PACED_RATE * (ctx.smoke ? 0.2 : 5) / 10)
    const contacts = (await emu.addContacts(VIEWS + 10 * Math.ceil(pacedCalls / n), '4473')).map((c) => c.number)
    const to = contacts.slice(0, 2)
    const t0 = performance.now()
    const statuses = await mapLimit(range(0, n), 8, async (i) =>
      await api.post<{ statusId: string, platformMessageId: string }>(`/sessions/fleet-${i}/send-status`, { type: 'text', content: `fleet ${i}`, targetNumbers: to.join(',') }))
    const t1 = performance.now()
    const bareIds = await mapLimit(range(0, n), 8, async (i) => await bare.sendStatus(String(i), `bare ${i}`, to))
    log(`fleet: ${n} statuses posted, service ${((t1 - t0) / 1000).toFixed(1)} s, bare ${((performance.now() - t1) / 1000).toFixed(1)} s`)
    const viewers = contacts.slice(0, VIEWS)
    const total = n * VIEWS
    const views = async (ids: string[]): Promise<void> => { await mapLimit(ids, 16, async (id) => await emu.sendViews(id, viewers, { force: true })) }
    const allAcked = async (numbers: string[], what: string): Promise<number> =>
      await waitFor(async () => await emu.unacked(numbers) === 0 ? performance.now() : undefined, 300_000, `every receipt acked by ${what}`, 20)
    await sleep(pauseMs)

    /** CPU seconds of the service, the bare process and the emulator since `from` (which of them was the bottleneck) */
    let barePids = bare.pids
    const cpuNow = (): number[] => [cpuSeconds(svc.pid), barePids.reduce((sum, pid) => sum + cpuSeconds(pid), 0), cpuSeconds(emuProc.pid)]
    const cpuSince = (from: number[]): string => {
      const [a, b, c] = cpuNow().map((x, i) => x - from[i])
      return `CPU s service ${a.toFixed(1)}, bare ${b.toFixed(1)}, emulator ${c.toFixed(1)}`
    }
    let cpu0 = cpuNow()
    const b0 = performance.now()
    const reached = bare.reached(total, 300_000)
    await views(bareIds)
    const bareSeen = await reached
    const bareAcked = await allAcked(range(0, n).map(bareNumber), 'bare Baileys')
    const bareRate = total / (Math.max(bareSeen, bareAcked) - b0) * 1000
    const bareLog = `bare: all reported after ${(bareSeen - b0).toFixed(0)} ms, acked after ${(bareAcked - b0).toFixed(0)} ms (${cpuSince(cpu0)})`
    await sleep(pauseMs)

    const db = new Database(join(svc.dataDir, 'status-tracker.db'), { readonly: true, fileMustExist: true })
    const countViewers = db.prepare<[], number>('select count(*) from viewers').pluck()
    const added = new Map<string, number>()
    socket.on('status-viewers-added', (e: Added) => { added.set(e.statusId, Math.max(added.get(e.statusId) ?? 0, e.viewerCount)) })
    const [s0, stored, evented, acked] = await profiled('burst', async () => {
      cpu0 = cpuNow()
      const s0 = performance.now()
      await views(statuses.map((s) => s.platformMessageId))
      const stored = await waitFor(() => countViewers.get() === total ? performance.now() : undefined, 300_000, `${total} viewers in SQLite`, 5)
      const evented = await waitFor(() => { connected(); return [...added.values()].reduce((a, c) => a + c, 0) === total ? performance.now() : undefined }, 120_000, 'every status-viewers-added', 5)
      return [s0, stored, evented, await allAcked(range(0, n).map(serviceNumber), 'the service')]
    })
    const svcRate = total / (Math.max(stored, evented, acked) - s0) * 1000
    const svcLog = `all in SQLite after ${(stored - s0).toFixed(0)} ms, evented after ${(evented - s0).toFixed(0)} ms, acked after ${(acked - s0).toFixed(0)} ms (${cpuSince(cpu0)})`
    const burstLog = `${bareLog}; service: ${svcLog}`
    log(`fleet: ${total} receipts over ${n} sessions; ${burstLog}; ${svcRate.toFixed(0)} vs ${bareRate.toFixed(0)} receipts/s`)
    db.close()
    // the bare sockets are done: left idle through the paced run they were the machine's busiest process
    // in it at N = 1,000 (1.8 CPU s in its 5 s, as much as the service), which the service's p99 then carried
    await bare.stop()
    barePids = []
    await sleep(pauseMs)

    // ---- paced, spread over the sessions in turn
    const sentAt = new Map<string, number>()
    const h = createHistogram()
    socket.on('status-viewers-added', (e: Added) => {
      const at = performance.now()
      for (const v of e.viewers) {
        const key = `${e.statusId}\n${v.number ?? ''}`
        const t = sentAt.get(key)
        if (t === undefined) continue
        h.record(Math.max(1, Math.round((at - t) * 1000)))
        sentAt.delete(key)
      }
    })
    const [start, pacedCpu] = await profiled('paced', async () => {
      cpu0 = cpuNow()
      const start = performance.now()
      const requests: Array<Promise<unknown>> = []
      for (let call = 0; call < pacedCalls; call++) {
        const wait = start + call * 10 - performance.now()
        if (wait > 1) await sleep(wait)
        const s = statuses[call % n]
        const from = VIEWS + 10 * Math.floor(call / n)
        const group = contacts.slice(from, from + 10)
        const now = performance.now()
        for (const v of group) sentAt.set(`${s.statusId}\n${v}`, now)
        requests.push(emu.sendViews(s.platformMessageId, group, { force: true }))
      }
      // a failed fetch says why in its cause only
      await Promise.all(requests).catch((err: Error) => { throw new Error(`a views call failed: ${String(err.cause ?? err)}`) })
      await waitFor(() => { connected(); return sentAt.size === 0 }, 60_000, 'every paced viewer in status-viewers-added', 10)
      return [start, cpuSince(cpu0)] as const
    })
    const ms = (q: number): number => h.percentile(q) / 1000
    log(`fleet: paced ${h.count} receipts over ${((performance.now() - start) / 1000).toFixed(1)} s (${pacedCpu}): p50 ${ms(50).toFixed(1)} ms, p99 ${ms(99).toFixed(1)} ms, max ${(h.max / 1000).toFixed(1)} ms`)
    return {
      memory,
      sessions: n,
      burst: { receipts: total, service: svcRate, bare: bareRate, log: burstLog },
      paced: { receipts: h.count, p50: ms(50), p99: ms(99), max: h.max / 1000, cpu: pacedCpu }
    }
  } finally {
    socket.close()
    await bare.stop()
    await svc.stop(30_000)
  }
}

function range (from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, k) => from + k)
}

export function fleetFigures (run: FleetRun, ns: number[]): Figure[] {
  const top = ns[ns.length - 1]
  const figures: Figure[] = ns.flatMap((n): Figure[] => {
    const m = run.memory.get(n)
    const how = 'settled RSS growth from before the first link ÷ N (median of five samples after a pause), linked eight at a time'
    return [
      {
        id: `scale.fleet.memory.${n}`,
        name: `memory per idle linked session, N = ${n}`,
        value: m === undefined ? null : m.service / MB,
        unit: 'MB',
        ...(n === top ? { target: { op: '<=' as const, value: 2 } } : {}),
        note: `the service; ${how}`
      },
      {
        id: `scale.fleet.bare-memory.${n}`,
        name: `memory per idle bare Baileys rc14 socket, N = ${n}`,
        value: m === undefined ? null : m.bare / MB,
        unit: 'MB',
        note: `at most ${PER_PROCESS} sockets a process (bench/lib/bare-shards.ts: ${Math.ceil(n / PER_PROCESS)} at this N), a useMultiFileAuthState folder per socket (bench/lib/bare-baileys.mjs); ${how}`
      },
      {
        id: `scale.fleet.memory-ratio.${n}`,
        name: `memory per idle session ÷ bare Baileys socket, N = ${n}`,
        value: m === undefined ? null : m.service / m.bare,
        unit: '×',
        ...(n === top ? { target: { op: '<=' as const, value: 1.5 } } : {})
      }
    ]
  })
  const { burst, paced } = run
  const spread = `${burst.receipts.toLocaleString('en-US')} receipts, ${VIEWS} per status on each of ${run.sessions} sessions`
  figures.push(
    {
      id: 'scale.fleet.receipts.ratio',
      name: `receipts spread over ${run.sessions} sessions ÷ bare Baileys rc14 (${spread})`,
      value: burst.service / burst.bare,
      unit: '×',
      target: { op: '>=', value: 2.5 },
      note: `one round each, same run: service ${burst.service.toFixed(0)} receipts/s, bare ${burst.bare.toFixed(0)} (${burst.log})`
    },
    {
      id: 'scale.fleet.receipts.rate',
      name: `receipts spread over ${run.sessions} sessions, service`,
      value: burst.service,
      unit: 'receipts/s',
      note: 'until all are in SQLite, counted by status-viewers-added at a socket.io client and acked (emulator ledger)'
    },
    {
      id: 'scale.fleet.paced.p99',
      name: `receipt → status-viewers-added p99 with ${run.sessions} sessions (paced ${PACED_RATE}/s, ${paced.receipts.toLocaleString('en-US')} receipts spread over them)`,
      value: paced.p99,
      unit: 'ms',
      target: { op: '<', value: 50 },
      note: `p50 ${paced.p50.toFixed(1)} ms, max ${paced.max.toFixed(1)} ms; from the driver's request to the emulator until the event at a socket.io client (${paced.cpu})`
    }
  )
  return figures
}
