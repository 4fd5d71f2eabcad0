/**
 * `npm run bench`: runs every benchmark script, one after the other, each in its own process with its
 * own service and emulator processes; prints one table and rewrites BENCHMARKS.md.
 *
 *   npm run bench                    all figures, writes BENCHMARKS.md
 *   npm run bench -- receipts reads  only these scripts (prints; writes only with BENCH_OUT)
 *   npm run bench -- soak            issue 41's endurance run alone (SOAK_MINUTES, default 60; bench/soak.ts)
 *   BENCH_SMOKE=1 npm run bench      tiny sizes, about a minute; writes only with BENCH_OUT
 *   BENCH_PROFILE=1 npm run bench    service and emulator under --cpu-prof; top frames printed
 *   BENCH_KEEP=1                     keep each script's temporary folder (data, service and emulator logs);
 *                                    kept anyway when a script fails
 */
import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, release, totalmem } from 'node:os'
import { join } from 'node:path'
import { formatTarget, formatValue, notesFromRoot, passes, PROFILE, SMOKE, table, targetRatio, verdict, type Figure } from './lib/bench.js'
import { ensureBuilt, ensureCert, nodeArgs, ROOT, track } from '../test/support/processes.js'

const SCRIPTS = ['memory', 'receipts', 'send-many', 'reads', 'insights', 'startup', 'cluster', 'scale', 'soak'] as const
/** per script, a little above its own limit */
const SCRIPT_LIMIT_MS = SMOKE ? 120_000 : 300_000
/**
 * issue 33's scale script links up to 1,000 sessions (bench/scale.ts bounds its parts); issue 41's soak runs
 * SOAK_MINUTES (60) of wall time after linking its sessions
 */
const LONG_SCRIPTS: Partial<Record<typeof SCRIPTS[number], number>> = {
  scale: 65 * 60_000,
  reads: 400_000,
  soak: (Number(process.env.SOAK_MINUTES ?? 60) + 20) * 60_000
}
/**
 * in smoke mode scale still starts three nodes (its cluster part) after linking a few sessions, and cluster
 * starts PostgreSQL, Redis and three nodes one after the other (over 100 s beside other test files on a loaded machine)
 */
const SMOKE_LONG: Partial<Record<typeof SCRIPTS[number], number>> = { scale: 300_000, reads: 170_000, soak: 180_000, cluster: 200_000 }
const limitOf = (name: typeof SCRIPTS[number]): number => SMOKE ? SMOKE_LONG[name] ?? SCRIPT_LIMIT_MS : LONG_SCRIPTS[name] ?? SCRIPT_LIMIT_MS
/**
 * Smoke mode's start order (two at a time): scale, the longest by far, first, beside the short ones, and cluster
 * once it is half done, so no long script runs alone at the end (the suite waits for the whole run: about 40 s less)
 */
const SMOKE_ORDER: ReadonlyArray<typeof SCRIPTS[number]> = ['scale', 'memory', 'receipts', 'cluster', 'send-many', 'reads', 'insights', 'startup']

const wanted = process.argv.slice(2)
const unknown = wanted.filter((w) => !(SCRIPTS as readonly string[]).includes(w))
if (unknown.length > 0) {
  console.error(`unknown benchmark ${unknown.join(', ')}; choose from ${SCRIPTS.join(', ')}`)
  process.exit(2)
}
// smoke mode runs the soak only when named: its own test (test/bench/soak.test.ts) runs its smoke variant
const scripts = wanted.length > 0 ? SCRIPTS.filter((s) => wanted.includes(s)) : SCRIPTS.filter((s) => !SMOKE || s !== 'soak')
const TOTAL_LIMIT_MS = 15 * 60_000 + scripts.reduce((sum, s) => sum + (SMOKE ? 0 : LONG_SCRIPTS[s] ?? 0), 0)
const outFile = process.env.BENCH_OUT ?? (SMOKE || PROFILE || wanted.length > 0 ? null : join(ROOT, 'BENCHMARKS.md'))
/** BENCH_JSON=<file>: also write every figure and each script's exit code as JSON (the smoke test reads it) */
const jsonFile = process.env.BENCH_JSON ?? null

interface ScriptRun { name: string, seconds: number, code: number | null, figures: Figure[], load: number }

async function runScript (name: typeof SCRIPTS[number]): Promise<ScriptRun> {
  const started = performance.now()
  const load = loadavg()[0]
  // under tsx (npm run bench), or from its compiled copy when this runner runs compiled (the suite's smoke)
  const child = track(spawn(process.execPath, nodeArgs(join('bench', `${name}.ts`)), {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit']
  }))
  const figures: Figure[] = []
  let pending = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8')
    let nl: number
    while ((nl = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, nl)
      pending = pending.slice(nl + 1)
      if (line.startsWith('BENCH_FIGURE ')) figures.push(JSON.parse(line.slice(13)) as Figure)
      else process.stdout.write(line + '\n')
    }
  })
  const timer = setTimeout(() => {
    console.error(`[run] ${name} over ${limitOf(name) / 1000} s, killing it`)
    child.kill('SIGTERM')
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref()
  }, limitOf(name))
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  clearTimeout(timer)
  return { name, seconds: (performance.now() - started) / 1000, code, figures, load }
}

function machine (): Record<string, string> {
  const cpu = cpus()
  return {
    cores: `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}`,
    memory: `${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    node: process.version,
    os: `${process.platform} ${release()}`
  }
}

function markdown (runs: ScriptRun[], meta: { date: string, seconds: number, loadBefore: number[], loadAfter: number[] }): string {
  const m = machine()
  const figures = runs.flatMap((r) => r.figures)
  const failed = runs.filter((r) => r.code !== 0)
  const rows = figures.map((f) => `| ${f.name} | ${formatValue(f.value, f.unit)} | ${formatTarget(f)} | ${targetRatio(f)} | ${verdict(f)} | ${f.note ?? ''} |`)
  const load = (l: number[]): string => l.map((x) => x.toFixed(2)).join(' / ')
  // NOTES.md's links are relative to bench/; BENCHMARKS.md sits at the root
  const notes = notesFromRoot(readFileSync(join(ROOT, 'bench', 'NOTES.md'), 'utf8').trim())
  return [
    '# Benchmarks',
    '',
    `Generated by \`npm run bench\`${SMOKE ? ' in smoke mode (tiny sizes: the figures mean nothing)' : ''}${PROFILE ? ' under --cpu-prof' : ''} on ${meta.date}, in ${meta.seconds.toFixed(0)} s.`,
    'Each script starts the service as `npm start` runs it (`node dist/src/server.js`, the compiled build, not tsx) and the WhatsApp Web emulator as two',
    'processes of their own on 127.0.0.1, with real Baileys, SQLite (`cluster`: PostgreSQL and Redis) and socket.io clients; the scripts are in `bench/`.',
    '',
    `- Machine: ${m.cores}, ${m.memory} RAM, ${m.os}`,
    `- Node.js ${m.node}`,
    `- Load average (1 / 5 / 15 min) before: ${load(meta.loadBefore)}, after: ${load(meta.loadAfter)}; 1-min load as each script started: ${runs.map((r) => `${r.name} ${r.load.toFixed(2)}`).join(', ')} (anything near 2 means other work shared the two cores)`,
    '',
    'Every target has its measured ÷ target beside it (for a `<` target below 1 passes, for a `≥` target 1 or more); ratio',
    'targets (unit ×) compare the service with a control measured in the same run (bench/NOTES.md says which).',
    `${figures.filter((f) => passes(f) === true).length} of ${figures.filter((f) => f.target !== undefined).length} targets met.`,
    '',
    '| figure | measured | target | measured ÷ target | result | how |',
    '|---|---|---|---|---|---|',
    ...rows,
    ...(failed.length > 0 ? ['', `**Not measured** (script failed): ${failed.map((r) => `${r.name} (exit ${String(r.code)})`).join(', ')}.`] : []),
    '',
    notes,
    ''
  ].join('\n')
}

const hardStop = setTimeout(() => { console.error('[run] total time limit reached'); process.exit(3) }, TOTAL_LIMIT_MS)
hardStop.unref()
const started = performance.now()
const loadBefore = loadavg()
const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
console.log(`[run] ${scripts.join(', ')}${SMOKE ? ' (smoke)' : ''}${PROFILE ? ' with CPU profiles' : ''}; machine ${JSON.stringify(machine())}, load ${loadBefore.map((x) => x.toFixed(2)).join(' ')}`)
// one script at a time, so no script's processes share the cores with another's; smoke mode, whose
// figures mean nothing, runs two at a time to finish sooner
const jobs = SMOKE ? 2 : 1
ensureCert() // once, before scripts that may run side by side
ensureBuilt() // likewise: what `npm start` runs, compiled when dist/ is missing or stale
const runs: ScriptRun[] = new Array(scripts.length)
// the report keeps SCRIPTS' order whatever order they ran in
const order = scripts.map((_, i) => i)
const rank = (name: typeof SCRIPTS[number]): number => SMOKE_ORDER.includes(name) ? SMOKE_ORDER.indexOf(name) : SMOKE_ORDER.length
if (SMOKE) order.sort((x, y) => rank(scripts[x]) - rank(scripts[y]))
let next = 0
await Promise.all(Array.from({ length: jobs }, async () => {
  while (next < order.length) {
    const i = order[next++]
    const run = await runScript(scripts[i])
    runs[i] = run
    console.log(`[run] ${run.name}: exit ${String(run.code)} after ${run.seconds.toFixed(1)} s, ${run.figures.length} figures`)
  }
}))
const seconds = (performance.now() - started) / 1000
const figures = runs.flatMap((r) => r.figures)
console.log(`\n${table(figures)}\n\n[run] all done in ${seconds.toFixed(1)} s`)
if (jsonFile !== null) {
  writeFileSync(jsonFile, JSON.stringify({ seconds, runs: runs.map(({ name, code, seconds, figures }) => ({ name, code, seconds, figures })) }, null, 2))
}
if (outFile !== null) {
  writeFileSync(outFile, markdown(runs, { date, seconds, loadBefore, loadAfter: loadavg() }))
  console.log(`[run] wrote ${outFile}`)
}
process.exit(runs.every((r) => r.code === 0) ? 0 : 1)
