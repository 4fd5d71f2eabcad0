import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { test } from 'node:test'
import { SPEED_TRICK_NAMES } from '../../src/speed-tricks.js'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT, RUNS_COMPILED, tempDir } from '../support/processes.js'

// docs/architecture.md, habit 9: "one test run with them off proves behaviour is the same". The tests that cover the
// speed tricks' behaviours (src/speed-tricks.ts) run again in a child process with SPEED_TRICKS_OFF=all,
// which test/helper.ts and test/platform/harness.ts pass on to every app and platform they build.
// The files run in one process, one after the other (about 20 s on this machine).
const COVERING = [
  'test/platform/receipt-turns.test.ts', // burst-gc: a burst of receipts, committed before acked
  'test/foundation/openapi.test.ts', // deferred-compiles: every schema compiled at ready
  'test/foundation/app.test.ts',
  'test/foundation/system.test.ts', // pieced-json and kept-statements: GET /api/stats with every session
  'test/statuses/sent-statuses-list.test.ts' // kept-statements: the list and every Kysely query on SQLite; pieced-json: a long list's text
  // shared-key-transactions is not here: test/platform/key-transactions.test.ts runs every case on both paths
  // in the main run (its own and Baileys' transactions side by side, the e2e case once with SPEED_TRICKS_OFF
  // set), so running it again here repeated the same checks (about 8 s of CPU)
]
const LIMIT_MS = 5 * 60_000
// under npm test the files run from their compiled copies (scripts/test-build.mjs), as this file does
const LOADER = RUNS_COMPILED ? ['--enable-source-maps'] : ['--import', 'tsx']
const FILE = (ts: string): string => RUNS_COMPILED ? `.test-build/${ts.replace(/\.ts$/, '.js')}` : ts

function run (args: string[]): Promise<{ code: number | null, output: string }> {
  return new Promise((resolve, reject) => {
    // without NODE_TEST_CONTEXT, which makes a child `node --test` skip its files as a recursive run
    const { NODE_TEST_CONTEXT: _, ...env } = process.env
    const child = spawn(process.execPath, args, { env: { ...env, SPEED_TRICKS_OFF: 'all' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (b: Buffer) => { output += b.toString() })
    child.stderr.on('data', (b: Buffer) => { output += b.toString() })
    const timer = setTimeout(() => { child.kill('SIGKILL') }, LIMIT_MS)
    child.on('error', reject)
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, output }) })
  })
}

test('the test helpers hand SPEED_TRICKS_OFF from the environment to the apps they build', async () => {
  const script = `import { rmSync } from 'node:fs'; import { testConfig } from './${FILE('test/helper.ts')}'; ` +
    'const { config, dir } = testConfig(); rmSync(dir, { recursive: true, force: true }); console.log(JSON.stringify([...config.speedTricksOff]))'
  const { code, output } = await run([...LOADER, '--input-type=module', '-e', script])
  assert.equal(code, 0, output)
  assert.deepEqual(JSON.parse(output.trim().split('\n').pop() ?? '[]'), SPEED_TRICK_NAMES)
})

test('with every speed trick off, the tests of their behaviours pass', async (t) => {
  // the files in one process, as npm test groups small files (scripts/test-files.mjs): one load of the app's graph
  const { groupEntry } = await import(pathToFileURL(join(ROOT, 'scripts', 'test-files.mjs')).href) as { groupEntry: (specifiers: string[]) => string }
  const dir = tempDir('st-tricks-off-')
  t.after(() => { dir.rm() })
  const entry = join(dir.path, 'covering.test.mjs')
  writeFileSync(entry, groupEntry(COVERING.map((ts) => pathToFileURL(join(ROOT, FILE(ts))).href)))
  const { code, output } = await run([...LOADER, '--test', '--test-timeout=120000', '--test-force-exit', '--test-reporter=spec', entry])
  const count = (name: string): number => Number(new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(output)?.[1] ?? NaN)
  assert.equal(code, 0, output.slice(-6000))
  assert.equal(count('fail'), 0, output.slice(-6000))
  assert.ok(count('pass') > COVERING.length, `every file ran (${count('pass')} passed)`)
  assert.match(output, new RegExp(`^✔ the group's ${COVERING.length} test files load`, 'm'), 'every file loaded')
})
