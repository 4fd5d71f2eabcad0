import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { nodeArgs } from '../support/processes.js'

// `npm run bench -- <scripts>` in smoke mode (BENCH_SMOKE=1): the named scripts with tiny sizes, each
// against its own service and emulator processes, checked to complete and to report exactly the figures
// given. The smoke is split over test/bench/smoke*.test.ts so that its parts run beside each other rather
// than as one long file; together they run every script. `npm run test:bench-smoke` runs them, not `npm test`
// (docs/development.md#suite-time).

const ROOT = resolve(import.meta.dirname, '..', '..')

interface Report { runs: Array<{ name: string, code: number | null, figures: Array<{ id: string, name: string, value: number | null }> }> }

export async function benchSmoke (t: TestContext, scripts: string[], expected: string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, BENCH_SMOKE: '1', BENCH_OUT: join(dir, 'BENCHMARKS.md'), BENCH_JSON: join(dir, 'figures.json') }
  // the benchmark's own processes are not what this suite measures coverage of
  delete childEnv.NODE_V8_COVERAGE
  // compiled when this test runs compiled (npm test), the scripts and their emulators with it (spawnNode)
  const child = spawn(process.execPath, [...nodeArgs(join('bench', 'run.ts')), ...scripts], { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] })
  t.after(() => { child.kill('SIGKILL') })
  let output = ''
  child.stdout.on('data', (c: Buffer) => { output += c.toString() })
  child.stderr.on('data', (c: Buffer) => { output += c.toString() })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  // which script failed and why come before the final table: those lines first, then the tail
  const why = output.split('\n').filter((l) => /^\[[\w-]+\] (failed|gave up)|exited|Error/.test(l)).slice(0, 20).join('\n')
  assert.equal(code, 0, `bench/run.ts failed:\n${why}\n…\n${output.slice(-3000)}`)

  const report = JSON.parse(readFileSync(join(dir, 'figures.json'), 'utf8')) as Report
  assert.deepEqual(report.runs.map((r) => [r.name, r.code]), scripts.map((s) => [s, 0]))
  const figures = report.runs.flatMap((r) => r.figures)
  assert.deepEqual(figures.map((f) => f.id).sort(), [...expected].sort())
  for (const f of figures) assert.ok(typeof f.value === 'number' && Number.isFinite(f.value) && f.value >= 0, `${f.id} = ${String(f.value)}`)

  const markdown = readFileSync(join(dir, 'BENCHMARKS.md'), 'utf8')
  assert.match(markdown, /^\| figure \| measured \| target \| measured ÷ target \| result \| how \|$/m)
  assert.match(markdown, /Node\.js v\d+/)
  for (const f of figures) assert.ok(markdown.includes(`| ${f.name} |`), `${f.name} is in the table`)
  assert.match(output, /\[run\] all done in/)
}
