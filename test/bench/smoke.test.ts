import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import assert from 'node:assert/strict'

// `npm run bench` in smoke mode: every script with tiny sizes (2 sessions, 200 receipts, 20 recipients,
// 1 s of autocannon, 500 contacts over 9 days of insights, 3 sessions at start), each against its own service and emulator processes, and the
// controls measured beside them (bare Baileys; the Express control, the plain peer and the bare Fastify app
// in `reads`). Checks that the scripts complete and report every figure; the values (and so the targets)
// mean nothing here.

const ROOT = resolve(import.meta.dirname, '..', '..')
const FIGURES = [
  'memory.per-session', 'memory.link-time',
  'receipts.burst.ratio', 'receipts.cpu.ratio', 'receipts.burst.rate', 'receipts.bare.rate', 'receipts.paced.p99', 'receipts.paced.p50',
  'receipts.paced.update-p99', 'receipts.memory.ratio',
  'send-many.first', 'send-many.again', 'send-many.bare', 'send-many.ratio', 'send-many.cpu-ratio', 'send-many.again-ratio',
  'reads.health.rps', 'reads.health.p99', 'reads.health.ratio', 'reads.health.bare-ratio', 'reads.health.peer-ratio',
  'reads.list.rps', 'reads.list.p99', 'reads.list.ratio', 'reads.list.peer-ratio', 'reads.reach.ratio', 'reads.reach.wide-ratio', 'reads.bare.rps',
  'insights.overview.p99', 'insights.contacts.p99',
  'startup.all-open', 'startup.http-ready',
  'cluster.health.one.rps', 'cluster.health.two.rps', 'cluster.receipts.one.rps', 'cluster.receipts.two.rps',
  'scale.promise.shared.2', 'scale.promise.library.2', 'scale.promise.shared.4', 'scale.promise.library.4', 'scale.promise.flat',
  'scale.link-one-more.2', 'scale.link-one-more.4', 'scale.link-one-more.flat',
  'scale.start.all-open.3', 'scale.start.health-p99.3', 'scale.start.stats-p99.3',
  'scale.cluster.join.s', 'scale.cluster.join.spread', 'scale.cluster.double-owners', 'scale.cluster.failover.s', 'scale.cluster.failover.lost',
  'scale.fleet.memory.3', 'scale.fleet.bare-memory.3', 'scale.fleet.memory-ratio.3',
  'scale.fleet.receipts.ratio', 'scale.fleet.receipts.rate', 'scale.fleet.paced.p99'
]

interface Report { runs: Array<{ name: string, code: number | null, figures: Array<{ id: string, name: string, value: number | null }> }> }

test('npm run bench in smoke mode: every script completes and prints its figures', { timeout: 420_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_SMOKE: '1', BENCH_OUT: join(dir, 'BENCHMARKS.md'), BENCH_JSON: join(dir, 'figures.json') }
  // the benchmark's own processes are not what this suite measures coverage of
  delete env.NODE_V8_COVERAGE
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'run.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.after(() => { child.kill('SIGKILL') })
  let output = ''
  child.stdout.on('data', (c: Buffer) => { output += c.toString() })
  child.stderr.on('data', (c: Buffer) => { output += c.toString() })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  // which script failed and why come before the final table: those lines first, then the tail
  const why = output.split('\n').filter((l) => /^\[[\w-]+\] (failed|gave up)|exited|Error/.test(l)).slice(0, 20).join('\n')
  assert.equal(code, 0, `bench/run.ts failed:\n${why}\n…\n${output.slice(-3000)}`)

  const report = JSON.parse(readFileSync(join(dir, 'figures.json'), 'utf8')) as Report
  assert.deepEqual(report.runs.map((r) => [r.name, r.code]), [['memory', 0], ['receipts', 0], ['send-many', 0], ['reads', 0], ['insights', 0], ['startup', 0], ['cluster', 0], ['scale', 0]])
  const figures = report.runs.flatMap((r) => r.figures)
  assert.deepEqual(figures.map((f) => f.id).sort(), [...FIGURES].sort())
  for (const f of figures) assert.ok(typeof f.value === 'number' && Number.isFinite(f.value) && f.value >= 0, `${f.id} = ${String(f.value)}`)

  const markdown = readFileSync(join(dir, 'BENCHMARKS.md'), 'utf8')
  assert.match(markdown, /^\| figure \| measured \| target \| measured ÷ target \| result \| how \|$/m)
  assert.match(markdown, /Node\.js v\d+/)
  for (const f of figures) assert.ok(markdown.includes(`| ${f.name} |`), `${f.name} is in the table`)
  assert.match(output, /\[run\] all done in/)
})
