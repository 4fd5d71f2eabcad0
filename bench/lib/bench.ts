/**
 * What every benchmark script shares: its figures with targets, smoke mode, a temporary folder, the
 * two processes it measures (emulator and service), optional CPU profiles, and a hard time limit.
 *
 * A script prints one `BENCH_FIGURE {json}` line per figure (bench/run.ts collects them) and a table.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { formatSummary, summarize } from '../profile-top.js'
import { ROOT, tempDir } from '../../test/support/processes.js'
import {
  planEmulator, startEmulatorProcess, startService,
  type EmulatorPlan, type EmulatorProc, type ServiceOptions, type ServiceProc
} from './procs.js'

export const SMOKE = process.env.BENCH_SMOKE === '1'
/** BENCH_PROFILE=1: the service and the emulator run under --cpu-prof; their top frames are printed after the run */
export const PROFILE = process.env.BENCH_PROFILE === '1'
/**
 * BENCH_HEAP=1: the service writes a V8 heap snapshot on SIGWINCH (`--heapsnapshot-signal`; SIGUSR2 is a shutdown signal to close-with-grace) into
 * bench/.profiles/<script>/heap; a script that supports it (receipts) asks for one before and after its
 * figure; `npx tsx bench/heap-diff.ts <before> <after>` compares them. The snapshot collects garbage first
 * and stops the process for seconds: such a run's figures are not the benchmark's.
 */
export const HEAP = process.env.BENCH_HEAP === '1'

export interface Target {
  op: '<' | '<=' | '>='
  value: number
}

export interface Figure {
  /** stable key, e.g. `reads.health.rps` */
  id: string
  /** what was measured, as shown in the table */
  name: string
  /** null when the run could not measure it */
  value: number | null
  unit: string
  /** absent: reported for context only */
  target?: Target
  /** one line of how / conditions */
  note?: string
}

export function passes (f: Figure): boolean | null {
  if (f.target === undefined || f.value === null) return null
  const { op, value } = f.target
  return op === '<' ? f.value < value : op === '<=' ? f.value <= value : f.value >= value
}

export function formatValue (value: number | null, unit: string): string {
  if (value === null) return 'n/a'
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2
  const n = value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 })
  return unit === '' ? n : `${n} ${unit}`
}

export function formatTarget (f: Figure): string {
  if (f.target === undefined) return '—'
  const op = f.target.op === '<=' ? '≤' : f.target.op === '>=' ? '≥' : '<'
  return `${op} ${formatValue(f.target.value, f.unit)}`
}

/** "pass", "**miss**", "n/a" (not measured) or "—" (context only) */
export function verdict (f: Figure): string {
  const ok = passes(f)
  if (ok === null) return f.target === undefined ? '—' : 'n/a'
  return ok ? 'pass' : '**miss**'
}

/** measured ÷ target, e.g. "0.72×" (for a `<` target below 1 passes, for a `≥` target 1 or more), or "—" */
export function targetRatio (f: Figure): string {
  if (f.target === undefined || f.value === null || f.target.value === 0) return '—'
  return `${formatValue(f.value / f.target.value, '')}×`
}

/**
 * bench/NOTES.md's text as it reads from the repository root, where BENCHMARKS.md copies it: its relative
 * links point from bench/ (`../docs/x.md` → `docs/x.md`, `lib/x.ts` → `bench/lib/x.ts`); absolute URLs and
 * in-page anchors stay.
 */
export function notesFromRoot (notes: string): string {
  return notes.replace(/\]\((?![a-z][a-z0-9+.-]*:|#|\/)([^)\s]+)\)/gi, (_m, target: string) => {
    const fromRoot = target.startsWith('../') ? target.slice(3) : `bench/${target.replace(/^\.\//, '')}`
    return `](${fromRoot})`
  })
}

export function table (figures: Figure[]): string {
  const rows = figures.map((f) => [f.name, formatValue(f.value, f.unit), formatTarget(f), targetRatio(f), verdict(f).replace(/\*\*/g, '')])
  const head = ['figure', 'measured', 'target', 'measured ÷ target', 'result']
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i])).join('  ')
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')
}

export interface BenchContext {
  smoke: boolean
  dir: string
  log: (msg: string) => void
  /** where BENCH_HEAP=1 snapshots go (heapSnapshot in procs.ts) */
  heapDir: string
  emulator: () => Promise<EmulatorProc>
  /** the service as its own process; with BENCH_PROFILE=1 under --cpu-prof */
  service: (opts?: Partial<ServiceOptions> & { profile?: boolean }) => Promise<ServiceProc>
}

/**
 * Runs one benchmark: `fn` returns its figures. Bounded by `limitMs`; every child is killed at the end,
 * on failure and on timeout too (procs.ts). Exit code 0 only when the figures were measured.
 */
/** `smokeLimitMs`: the limit in smoke mode (tiny sizes), for a script whose smoke run still starts many processes */
export async function runBench (name: string, limitMs: number, fn: (ctx: BenchContext) => Promise<Figure[]>, smokeLimitMs = 100_000): Promise<void> {
  const started = performance.now()
  const dir = tempDir(`bench-${name}-`)
  const log = (msg: string): void => { console.log(`[${name} +${((performance.now() - started) / 1000).toFixed(1)}s] ${msg}`) }
  const profileDir = join(ROOT, 'bench', '.profiles', name)
  const profileFlags = (who: string): string[] => {
    mkdirSync(join(profileDir, who), { recursive: true })
    return ['--cpu-prof', '--cpu-prof-dir', join(profileDir, who)]
  }
  const heapDir = join(profileDir, 'heap')
  const heapFlags = (): string[] => {
    mkdirSync(heapDir, { recursive: true })
    return ['--heapsnapshot-signal=SIGWINCH', `--diagnostic-dir=${heapDir}`]
  }
  let plan: Promise<EmulatorPlan> | undefined
  let emulatorStart: Promise<EmulatorProc> | undefined
  let emulator: EmulatorProc | undefined
  const services: ServiceProc[] = []
  const startEmulator = async (): Promise<EmulatorProc> => {
    plan ??= planEmulator()
    emulatorStart ??= plan.then(async (p) => {
      emulator = await startEmulatorProcess(dir.path, p, PROFILE ? { nodeFlags: profileFlags('emulator') } : {})
      return emulator
    })
    return await emulatorStart
  }
  const ctx: BenchContext = {
    smoke: SMOKE,
    dir: dir.path,
    log,
    heapDir,
    emulator: startEmulator,
    service: async (opts = {}) => {
      plan ??= planEmulator()
      const p = await plan
      // both load at the same time: the service only dials the emulator once a session starts
      const [, svc] = await Promise.all([startEmulator(), startService({
        dir: dir.path,
        emulator: p,
        ...opts,
        nodeFlags: [...(opts.nodeFlags ?? []), ...((opts.profile ?? PROFILE) ? profileFlags('service') : []), ...(HEAP ? heapFlags() : [])]
      })])
      services.push(svc)
      return svc
    }
  }
  // a profiled run prints the profiles it wrote, not those of earlier runs
  if (PROFILE || HEAP) rmSync(profileDir, { recursive: true, force: true })
  const limit = SMOKE ? Math.min(limitMs, smokeLimitMs) : limitMs
  const timer = setTimeout(() => {
    dir.keep()
    console.error(`[${name}] gave up after ${limit / 1000} s; logs and data kept in ${dir.path}`)
    process.exit(3)
  }, limit)
  timer.unref()
  let code = 0
  try {
    const figures = await fn(ctx)
    for (const f of figures) console.log(`BENCH_FIGURE ${JSON.stringify(f)}`)
    console.log(`\n${table(figures)}\n`)
  } catch (err) {
    code = 1
    console.error(`[${name}] failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`)
    for (const svc of services) console.error(`--- service log (${svc.logFile}) ---\n${svc.tail(15)}`)
    if (emulator !== undefined) console.error(`--- emulator log ---\n${emulator.tail(15)}`)
  } finally {
    // SIGTERM first: the service closes cleanly and writes its CPU profile
    await Promise.all(services.map(async (s) => await s.stop(10_000)))
    await emulator?.stop(5000)
    clearTimeout(timer)
  }
  if (PROFILE && code === 0) {
    printProfiles('service', join(profileDir, 'service'))
    printProfiles('emulator', join(profileDir, 'emulator'))
  }
  log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  if (code === 0 && process.env.BENCH_KEEP !== '1') dir.rm()
  else { dir.keep(); log(`logs and data kept in ${dir.path}`) }
  process.exit(code)
}

function printProfiles (who: string, profileDir: string): void {
  let files: string[]
  try { files = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile')) } catch { return }
  for (const file of files) {
    const path = join(profileDir, file)
    const profile = JSON.parse(readFileSync(path, 'utf8')) as Parameters<typeof summarize>[0]
    const s = summarize(profile, 15)
    if (s.totalMs - s.idleMs < 200) continue // loader worker threads and the like
    console.log(`\n=== CPU profile of the ${who}: ${path}\n${formatSummary(s)}`)
  }
}
