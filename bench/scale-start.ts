/**
 * Start with N stored linked sessions, paced (issue 33): link N sessions once, stop the service cleanly, then
 * time a fresh service on the same data from spawn until GET /api/stats reports all N connected, while
 * /api/health is asked all along (one request at a time, every 20 ms): its p99 is what a monitor saw
 * during the start. The emulator's connection log gives the most handshakes that were under way at once.
 *
 *   npx tsx bench/scale-start.ts [N=100]      (BENCH_SMOKE=1: N = 3)
 *   BENCH_START_HOLD=1 npx tsx bench/scale-start.ts 1000   links once, measures again on demand (see `hold`)
 *   BENCH_HEAP=1 npx tsx bench/scale-start.ts 100          heap snapshots at 10 and N idle sessions (`linkStored`)
 *
 * `runStart` is the measurement on its own, for a larger run to call with its own context (bench/scale.ts).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { HEAP, runBench, SMOKE, type BenchContext, type Figure } from './lib/bench.js'
import { cpuSeconds, heapSnapshot } from './lib/procs.js'
import { connectedCount, emulatorApi, linkSessions, peakHandshakes, serviceApi } from '../test/support/clients.js'
import { ensureBuilt } from '../test/support/processes.js'
import { API_KEY } from '../test/support/service.js'
import { sleep, waitFor } from '../test/support/wait.js'

export interface StartRun {
  sessions: number
  /** SESSION_START_CONCURRENCY of the measured start */
  concurrency: number
  /** spawn → /api/health answers */
  httpReadyS: number
  /** spawn → GET /api/stats shows every session connected */
  allOpenS: number
  /** /api/health answers between HTTP ready and all open */
  health: { count: number, failed: number, p50Ms: number, p99Ms: number, maxMs: number }
  /** GET /api/stats answers between HTTP ready and all open (the poll that sees all open, every 50 ms) */
  stats: { count: number, p50Ms: number, p99Ms: number, maxMs: number }
  /** the most handshakes under way at once, as the emulator saw them */
  peakHandshakes: number
  /** the service's CPU from spawn to all open */
  cpuS: number
  linkS: number
  /** the machine's 1-minute load average at the end (a shared machine's figures are noisy) */
  load: number
}

function quantile (sorted: number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

/** What a start needs from the linking: the emulator holding the accounts, and how long linking took. */
export interface Linked { n: number, emu: ReturnType<typeof emulatorApi>, linkS: number }

/**
 * Links `n` sessions (QR, eight at a time) and stops the linking service cleanly: its data is what each start
 * restores. BENCH_HEAP=1: heap snapshots of the linking service with 10 and with `n` idle linked sessions
 * (bench/heap-diff.ts compares them: what each idle session holds).
 */
export async function linkStored (ctx: BenchContext, n: number): Promise<Linked> {
  const { log } = ctx
  const emu = emulatorApi((await ctx.emulator()).controlUrl)
  const first = await ctx.service({ name: 'service-link', profile: false })
  const t0 = performance.now()
  const specs = Array.from({ length: n }, (_, i) => ({ sessionId: `start-${i}`, number: `1555800${String(i).padStart(4, '0')}` }))
  const heapAt = HEAP && n > 10 ? [10, n] : []
  let done = 0
  for (const upTo of [...heapAt, n]) {
    if (upTo > done) await linkSessions(serviceApi(first.base), emu, specs.slice(done, upTo), 8)
    done = upTo
    if (heapAt.includes(upTo)) {
      await sleep(5000) // idle: the link's own work over
      log(`heap snapshot with ${upTo} idle linked sessions: ${await heapSnapshot(first.pid, ctx.heapDir)}`)
    }
  }
  const linkS = (performance.now() - t0) / 1000
  log(`${n} sessions linked in ${linkS.toFixed(1)} s`)
  const code = await first.stop(30_000)
  if (code !== 0) throw new Error(`the linking service exited with ${code}`)
  return { n, emu, linkS }
}

/** A fresh service on the linked sessions' data, timed from spawn until all are open (see the file's comment). */
export async function measureStart (
  ctx: BenchContext, linked: Linked, opts: { concurrency?: number, env?: Record<string, string>, name?: string, stop?: boolean } = {}
): Promise<StartRun> {
  const { log } = ctx
  const { n, emu, linkS } = linked
  const since = Date.now()
  // the service's default unless asked for another (GET /api/stats says which it took)
  const asked: Record<string, string> = opts.concurrency === undefined ? {} : { SESSION_START_CONCURRENCY: String(opts.concurrency) }
  const svc = await ctx.service({ name: opts.name ?? 'service-start', env: { LOG_LEVEL: 'info', ...asked, ...opts.env } })
  const api = serviceApi(svc.base)
  const concurrency = (await api.get<{ start: { concurrency: number } }>('/stats')).start.concurrency
  let open = false
  const latencies: number[] = []
  let failed = 0
  const probe = (async () => {
    while (!open) {
      const started = performance.now()
      try {
        const res = await fetch(`${svc.base}/api/health`, { headers: { 'x-api-key': API_KEY }, signal: AbortSignal.timeout(10_000) })
        await res.arrayBuffer()
        if (res.ok) latencies.push(performance.now() - started)
        else failed++
      } catch {
        failed++
      }
      await sleep(20)
    }
  })()
  // the poll that sees all open is timed too: GET /api/stats p99 during the start (issue 41: < 50 ms)
  const statsLatencies: number[] = []
  const openAt = await waitFor(async () => {
    const started = performance.now()
    const connected = await connectedCount(api)
    statsLatencies.push(performance.now() - started)
    return connected === n ? performance.now() : undefined
  }, 600_000, `${n} sessions to open`, 50)
  open = true
  await probe
  const cpuS = cpuSeconds(svc.pid)
  // the next start (BENCH_START_HOLD) must not find this one still holding the sessions
  if (opts.stop === true) await svc.stop(30_000)
  const sorted = latencies.sort((a, b) => a - b)
  const statsSorted = statsLatencies.sort((a, b) => a - b)
  const peak = peakHandshakes((await emu.connections()).filter((c) => Date.parse(c.openedAt) >= since))
  const run: StartRun = {
    sessions: n,
    concurrency,
    httpReadyS: svc.readyMs / 1000,
    allOpenS: (openAt - svc.spawnedAt) / 1000,
    health: { count: sorted.length, failed, p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99), maxMs: sorted.at(-1) ?? 0 },
    stats: { count: statsSorted.length, p50Ms: quantile(statsSorted, 0.5), p99Ms: quantile(statsSorted, 0.99), maxMs: statsSorted.at(-1) ?? 0 },
    peakHandshakes: peak,
    cpuS,
    linkS,
    load: loadavg()[0]
  }
  log(`spawn → HTTP ready ${run.httpReadyS.toFixed(2)} s, → all ${n} open ${run.allOpenS.toFixed(2)} s; health p50 ${run.health.p50Ms.toFixed(1)} ms, ` +
    `p99 ${run.health.p99Ms.toFixed(1)} ms, max ${run.health.maxMs.toFixed(0)} ms over ${run.health.count} answers (${failed} failed); ` +
    `stats p50 ${run.stats.p50Ms.toFixed(1)} ms, p99 ${run.stats.p99Ms.toFixed(1)} ms, max ${run.stats.maxMs.toFixed(0)} ms over ${run.stats.count}; ` +
    `peak handshakes ${peak} (limit ${concurrency}); service CPU ${cpuS.toFixed(1)} s; load ${run.load.toFixed(2)}`)
  return run
}

/** Links `n` sessions, restarts the service on their data and measures the start (see the file's comment). */
export async function runStart (ctx: BenchContext, n: number, opts: { concurrency?: number, env?: Record<string, string> } = {}): Promise<StartRun> {
  return await measureStart(ctx, await linkStored(ctx, n), opts)
}

/** The figures of one run, with the issue's targets where it sets them (they are for N = 1,000). */
export function startFigures (r: StartRun): Figure[] {
  const at = `start with ${r.sessions.toLocaleString('en-US')} stored linked sessions`
  return [
    {
      id: `scale.start.all-open.${r.sessions}`,
      name: `${at}, spawn → all open`,
      value: r.allOpenS,
      unit: 's',
      ...(r.sessions >= 1000 ? { target: { op: '<=' as const, value: 60 } } : {}),
      note: `SESSION_START_CONCURRENCY=${r.concurrency}, at most ${r.peakHandshakes} handshakes at once (emulator); HTTP ready after ${r.httpReadyS.toFixed(2)} s; service CPU ${r.cpuS.toFixed(1)} s; load ${r.load.toFixed(1)}`
    },
    {
      id: `scale.start.health-p99.${r.sessions}`,
      name: `${at}, GET /api/health p99 during the start`,
      value: r.health.p99Ms,
      unit: 'ms',
      target: { op: '<', value: 100 },
      note: `${r.health.count} answers from HTTP ready to all open, one at a time every 20 ms; p50 ${r.health.p50Ms.toFixed(1)} ms, max ${r.health.maxMs.toFixed(0)} ms, ${r.health.failed} failed`
    },
    {
      id: `scale.start.stats-p99.${r.sessions}`,
      name: `${at}, GET /api/stats p99 during the start`,
      value: r.stats.p99Ms,
      unit: 'ms',
      ...(r.sessions >= 1000 ? { target: { op: '<' as const, value: 50 } } : {}),
      note: `${r.stats.count} answers from HTTP ready to all open (the poll that waits for all open, every 50 ms, beside the health probe); p50 ${r.stats.p50Ms.toFixed(1)} ms, max ${r.stats.maxMs.toFixed(0)} ms`
    }
  ]
}

/**
 * BENCH_START_HOLD=1: links once, then measures a start again each time `<dir>/again` appears (its lines,
 * KEY=VALUE, are that start's settings, e.g. SESSION_START_CONCURRENCY=16; the service is rebuilt first when
 * its sources changed), until `<dir>/stop` appears: figures before and after a change on the same linked data.
 */
async function hold (ctx: BenchContext, linked: Linked): Promise<StartRun> {
  let last = await measureStart(ctx, linked, { name: 'service-start-0', stop: true })
  for (let round = 1; ; round++) {
    ctx.log(`holding ${linked.n} linked sessions: \`touch ${ctx.dir}/again\` (KEY=VALUE lines: settings) to measure again, \`touch ${ctx.dir}/stop\` to end`)
    const next = await waitFor(async () => existsSync(join(ctx.dir, 'stop')) ? 'stop' : existsSync(join(ctx.dir, 'again')) ? 'again' : undefined, 24 * 3600_000, 'again or stop', 500)
    if (next === 'stop') return last
    const env = Object.fromEntries(readFileSync(join(ctx.dir, 'again'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
    rmSync(join(ctx.dir, 'again'))
    ctx.log(`start ${round}${Object.keys(env).length > 0 ? ` with ${JSON.stringify(env)}` : ''}`)
    try {
      // the sources may have changed since the last start (ensureBuilt alone checks once per process)
      ensureBuilt({ again: true })
      last = await measureStart(ctx, linked, { name: `service-start-${round}`, env, stop: true })
    } catch (err) {
      ctx.log(`start ${round} failed: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = SMOKE ? 3 : Number(process.argv[2] ?? 100)
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new Error(`N must be 1–1000 (got ${process.argv[2]})`)
  const holding = process.env.BENCH_START_HOLD === '1'
  await runBench('scale-start', holding ? 24 * 3600_000 : 900_000, async (ctx) => {
    const linked = await linkStored(ctx, n)
    return startFigures(holding ? await hold(ctx, linked) : await measureStart(ctx, linked))
  })
}
