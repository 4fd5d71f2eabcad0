/**
 * Issue 33, scale: the one entry of `npm run bench -- scale`. Its parts (BENCH_SCALE=<part,part>, default all):
 *
 * - `promise`: the cost of one awaited promise with N = 10, 100, 1,000 sessions' key stores, each variant
 *   in a fresh process (bench/lib/promise-cost.ts): `library` as rc14 makes them (one AsyncLocalStorage
 *   per store), `shared` as the service makes them (one for all, speed trick shared-key-transactions).
 * - `link`: the time to link one more session (QR through the API, scanned in the emulator) with N = 10,
 *   100, 1,000 sessions linked, the sessions linked eight at a time as test/support/clients.ts does; the
 *   service as `npm start` runs it, and for comparison with SPEED_TRICKS_OFF=shared-key-transactions up
 *   to BENCH_SCALE_BEFORE_MAX (default 100). The emulator's memory per linked account (its RSS growth ÷
 *   accounts) comes with it. Bounded by BENCH_SCALE_LINK_MS (default 20 min): short of an N, the one more is timed at the count reached.
 * - `start` (bench/scale-start.ts): a start with 1,000 stored linked sessions, spawn → all open, and the
 *   health p99 meanwhile.
 * - `cluster` (bench/scale-cluster.ts): three nodes (PostgreSQL + Redis) with 300 sessions: a third node
 *   joining takes its share, then one of three is SIGKILLed (failover time, receipts lost).
 * - `fleet` (bench/scale-fleet.ts): the service and bare Baileys (processes of 100 sockets) each link 100, then 1,000
 *   accounts: memory per idle session at each N against bare sockets; then, with all linked, receipts
 *   spread over every session (rate ÷ bare Baileys) and the live p99 of receipts paced over them.
 *
 * BENCH_SCALE_N (default 1000): the largest N of `link` and `fleet` (e.g. 100 for a shorter run).
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { runBench, type BenchContext, type Figure } from './lib/bench.js'
import { clusterFigures, runCluster } from './scale-cluster.js'
import { fleetFigures, runFleet } from './scale-fleet.js'
import { runStart, startFigures } from './scale-start.js'
import { rssOf } from './lib/procs.js'
import { emulatorApi, linkSessions, serviceApi, type EmulatorApi, type ServiceApi } from '../test/support/clients.js'
import { nodeArgs, ROOT, track } from '../test/support/processes.js'

const PARTS = ['promise', 'link', 'start', 'cluster', 'fleet'] as const
type Part = typeof PARTS[number]
const wanted = (process.env.BENCH_SCALE ?? PARTS.join(',')).split(',').map((s) => s.trim()).filter((s): s is Part => (PARTS as readonly string[]).includes(s))
const LINK_BUDGET_MS = Number(process.env.BENCH_SCALE_LINK_MS ?? 20 * 60_000)
const BEFORE_MAX = Number(process.env.BENCH_SCALE_BEFORE_MAX ?? 100)
const MAX_N = Number(process.env.BENCH_SCALE_N ?? 1000)

type Variant = 'library' | 'shared'
interface PromiseCost { nsPerPromise: number, rounds: number[] }

/** one promise-cost measurement in a process of its own */
async function promiseCost (variant: Variant, n: number): Promise<PromiseCost> {
  const child = track(spawn(process.execPath, [...nodeArgs(join('bench', 'lib', 'promise-cost.ts')), variant, String(n)], {
    cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit']
  }))
  let out = ''
  child.stdout?.on('data', (b: Buffer) => { out += b.toString('utf8') })
  const timer = setTimeout(() => { child.kill('SIGKILL') }, 300_000)
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  clearTimeout(timer)
  const last = out.trim().split('\n').pop() ?? ''
  if (code !== 0 || !last.startsWith('{')) throw new Error(`promise-cost ${variant} ${n} exited ${String(code)}: ${out.slice(-500)}`)
  return JSON.parse(last) as PromiseCost
}

async function promiseFigures (ns: number[], log: (m: string) => void): Promise<Figure[]> {
  const cost: Record<Variant, Map<number, number>> = { library: new Map(), shared: new Map() }
  for (const n of ns) {
    for (const variant of ['library', 'shared'] as const) {
      // one that fails (or runs out of time on a loaded machine) is n/a, the others still count
      const r = await promiseCost(variant, n).catch((err: unknown) => { log(String(err)); return undefined })
      if (r === undefined) continue
      cost[variant].set(n, r.nsPerPromise)
      log(`promise cost, ${variant}, N = ${n}: ${r.nsPerPromise.toFixed(0)} ns (rounds ${r.rounds.join(', ')})`)
    }
  }
  const figures: Figure[] = ns.flatMap((n) => (['shared', 'library'] as const).map((variant): Figure => ({
    id: `scale.promise.${variant}.${n}`,
    name: `cost of one awaited promise, ${n} sessions' key stores, ${variant === 'shared' ? "the service's shared transaction context" : "rc14's AsyncLocalStorage per store (before)"}`,
    value: cost[variant].get(n) ?? null,
    unit: 'ns',
    note: 'best of five rounds of awaited promises in a fresh process, each store after one transaction (bench/lib/promise-cost.ts)'
  })))
  const first = ns[0]
  const last = ns[ns.length - 1]
  const growth = (variant: Variant): number | null => {
    const a = cost[variant].get(first)
    const b = cost[variant].get(last)
    return a === undefined || b === undefined ? null : b / a
  }
  figures.push({
    id: 'scale.promise.flat',
    name: `cost of a promise, ${last} ÷ ${first} sessions (shared transaction context)`,
    value: growth('shared'),
    unit: '×',
    // flat within this machine's noise (rounds of one run differ by 2× and more)
    target: { op: '<=', value: 2 },
    note: `rc14's per-store storage: ${growth('library')?.toFixed(0) ?? 'n/a'} ×`
  })
  return figures
}

/** Links sessions `from`..`to`-1 (numbers from `prefix`), eight at a time. */
async function linkRange (api: ServiceApi, emu: EmulatorApi, prefix: string, from: number, to: number): Promise<void> {
  const specs = Array.from({ length: to - from }, (_, k) => ({ sessionId: `${prefix}-${from + k}`, number: `1${prefix === 'a' ? '555' : '556'}7${String(from + k).padStart(6, '0')}` }))
  await linkSessions(api, emu, specs, 8)
}

interface LinkRun { oneMore: Map<number, number>, emulatorBytesPerAccount: number | null, reached: number }

/**
 * Links up to each N of `ns` on a fresh service (env: its settings), timing three more links one at a
 * time at each N (median); stops at `deadline`.
 */
async function linkSeries (ctx: BenchContext, prefix: string, env: Record<string, string>, ns: number[], deadline: number): Promise<LinkRun> {
  const svc = await ctx.service({ name: `service-${prefix}`, env: { DATA_DIR: join(ctx.dir, `data-${prefix}`), ...env }, profile: false })
  const emuProc = await ctx.emulator()
  const emu = emulatorApi(emuProc.controlUrl)
  const api = serviceApi(svc.base)
  const rss0 = rssOf(emuProc.pid)
  const oneMore = new Map<number, number>()
  let linked = 0
  let extra = 0
  try {
    for (const n of ns) {
      const t0 = performance.now()
      // in steps of 100, so the budget is kept between steps
      while (linked < n && performance.now() < deadline) {
        const to = Math.min(n, linked + 100)
        await linkRange(api, emu, prefix, linked + extra, to + extra)
        linked = to
      }
      ctx.log(`${prefix}: ${linked} linked (and ${extra} timed ones), this step in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
      // out of budget short of n: the time at the count reached still tells whether it grew
      const at = linked
      const times: number[] = []
      for (let k = 0; k < 3; k++) {
        const s = performance.now()
        await linkRange(api, emu, prefix, at + extra, at + extra + 1)
        extra++
        times.push(performance.now() - s)
      }
      times.sort((a, b) => a - b)
      oneMore.set(at, times[1])
      ctx.log(`${prefix}: one more with ${at} linked: ${times.map((x) => x.toFixed(0)).join(', ')} ms`)
      if (linked < n) break
    }
  } finally {
    await svc.stop(30_000)
  }
  const accounts = linked + extra
  return { oneMore, reached: linked, emulatorBytesPerAccount: accounts > 0 ? (rssOf(emuProc.pid) - rss0) / accounts : null }
}

async function linkFigures (ctx: BenchContext, ns: number[]): Promise<Figure[]> {
  const started = performance.now()
  // the service as it is first, with most of the budget; the before side (smoke mode: not run) with the rest
  const after = await linkSeries(ctx, 'a', {}, ns, started + (ctx.smoke ? 1 : 0.7) * LINK_BUDGET_MS)
  const before = ctx.smoke
    ? { oneMore: new Map<number, number>() }
    : await linkSeries(ctx, 'b', { SPEED_TRICKS_OFF: 'shared-key-transactions' }, ns.filter((n) => n <= BEFORE_MAX), started + LINK_BUDGET_MS)
  const figures: Figure[] = []
  const measured = [...new Set([...ns, ...after.oneMore.keys()])].sort((x, y) => x - y)
  for (const n of measured) {
    figures.push({
      id: `scale.link-one-more.${n}`,
      name: `link one more session (QR) with ${n} linked`,
      value: after.oneMore.has(n) ? after.oneMore.get(n)! / 1000 : null,
      unit: 's',
      note: `median of three, one at a time; with rc14's per-socket AsyncLocalStorage (SPEED_TRICKS_OFF=shared-key-transactions): ${before.oneMore.has(n) ? `${(before.oneMore.get(n)! / 1000).toFixed(2)} s` : 'not measured'}`
    })
  }
  const top = Math.max(...after.oneMore.keys(), ns[0])
  const a = after.oneMore.get(ns[0])
  const b = after.oneMore.get(top)
  figures.push({
    id: 'scale.link-one-more.flat',
    name: `link one more session, ${top} ÷ ${ns[0]} linked`,
    value: a !== undefined && b !== undefined ? b / a : null,
    unit: '×',
    target: { op: '<=', value: 2 },
    note: `the service linked ${after.reached} sessions within the bench's budget`
  })
  // a handful of accounts in smoke mode move the RSS less than its noise
  if (!ctx.smoke) figures.push({
    id: 'scale.emulator.per-account',
    name: `emulator memory per linked account (${after.reached + 3 * after.oneMore.size} accounts)`,
    value: after.emulatorBytesPerAccount === null ? null : after.emulatorBytesPerAccount / 1024 ** 2,
    unit: 'MB',
    note: "the emulator process's RSS growth while the service's sessions were linked, ÷ accounts (one device each)"
  })
  return figures
}

// the smoke limit (240 s): smoke mode still starts five services, three cluster nodes and a bare fleet, 70 s on a quiet machine
await runBench('scale', 60 * 60_000, async (ctx) => {
  const upTo = (all: number[]): number[] => all.filter((n) => n <= MAX_N).concat(all.some((n) => n > MAX_N) && !all.includes(MAX_N) ? [MAX_N] : [])
  const ns = ctx.smoke ? [2, 4] : upTo([10, 100, 1000])
  const fleetNs = ctx.smoke ? [3] : upTo([100, 1000])
  const figures: Figure[] = []
  if (wanted.includes('promise')) figures.push(...await promiseFigures(ns, ctx.log))
  if (wanted.includes('link')) figures.push(...await linkFigures(ctx, ns))
  if (wanted.includes('start')) figures.push(...startFigures(await runStart(ctx, ctx.smoke ? 3 : 1000)))
  if (wanted.includes('cluster')) figures.push(...clusterFigures(await runCluster(ctx, { sessions: ctx.smoke ? 6 : 300 })))
  if (wanted.includes('fleet')) figures.push(...fleetFigures(await runFleet(ctx, fleetNs), fleetNs))
  return figures
}, 240_000)
