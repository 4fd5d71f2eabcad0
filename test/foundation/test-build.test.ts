import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

// `npm test` runs the tests compiled once by scripts/test-build.mjs (its pretest) into .test-build/, with no
// loader in the test processes (docs/development.md#suite-time says why and what it saves). What must
// hold for that to test the same thing as `node --import tsx --test file.test.ts`:

const SOURCE = fileURLToPath(import.meta.url)
const ROOT = resolve(dirname(SOURCE), '..', '..')
const BUILD = join(ROOT, '.test-build')
const TEST_FOLDERS = ['test', 'emulator/test', 'client/test']
/** this process runs the compiled copy (npm test), not the source under tsx */
const compiled = (process.argv[1] ?? '').split(sep).includes('.test-build')

function testFiles (root: string, folder: string, suffix: string): string[] {
  const out: string[] = []
  const dir = join(root, folder)
  if (!existsSync(dir)) return out
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const rel = `${folder}/${entry.name}`
    if (entry.isDirectory()) { if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) out.push(...testFiles(root, rel, suffix)) } else if (entry.name.endsWith(suffix)) out.push(rel)
  }
  return out
}

test('npm test runs the compiled tests with no loader, after its pretest compiled them', () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  assert.doesNotMatch(scripts.test, /--import|--loader|tsx/, 'no loader hook in the test processes')
  for (const folder of TEST_FOLDERS) assert.ok(new RegExp(` \\.test-build/${folder}[ )]`).test(scripts.test), `npm test finds the compiled files of ${folder}/`)
  assert.match(scripts.test, /\$\(node scripts\/test-files\.mjs( \.test-build\/[\w/]+)+\)/, 'the files come from scripts/test-files.mjs, the longest first')
  assert.match(scripts.test, /--enable-source-maps/, 'failures name the .ts lines')
  assert.match(scripts.pretest, /node scripts\/test-build\.mjs$/, 'the pretest compiles them last')
})

test('a compiled test sees its own source path: import.meta.url, dirname and filename name the .ts file', () => {
  assert.equal(relative(ROOT, SOURCE), join('test', 'foundation', 'test-build.test.ts'))
  assert.equal(import.meta.dirname, dirname(SOURCE))
  assert.equal(import.meta.filename, SOURCE)
})

test('every test file has its compiled copy, and no compiled test outlives its source', (t) => {
  if (!compiled) { t.skip('run from the source: npm test checks the compiled copies'); return }
  for (const folder of TEST_FOLDERS) {
    const sources = testFiles(ROOT, folder, '.test.ts').map((f) => f.replace(/\.ts$/, '.js'))
    assert.deepEqual(testFiles(BUILD, folder, '.test.js').sort(), sources.sort(), `.test-build/${folder}/ mirrors ${folder}/`)
  }
})

interface Plan { alone: string[], groups: Array<{ name: string, files: string[] }>, long: Array<{ name: string, files: string[] }> }
interface TestFiles {
  LONGEST: string[]
  SEPARATE: string[]
  GROUP_SIZE: number
  GROUPS_AFTER: number
  LONG_TOGETHER: number
  plan: (folders: string[]) => Plan
  writeEntries: (folders: string[]) => string[]
}
const testFilesModule = async (): Promise<TestFiles> => await import(pathToFileURL(join(ROOT, 'scripts', 'test-files.mjs')).href) as TestFiles

test('scripts/test-files.mjs runs every compiled test file once: LONGEST\'s first alone, its others a few a process, the others in groups', async (t) => {
  const { LONGEST, SEPARATE, GROUP_SIZE, GROUPS_AFTER, LONG_TOGETHER, plan } = await testFilesModule()
  for (const long of LONGEST) assert.ok(existsSync(join(ROOT, long.replace(/\.js$/, '.ts'))), `${long} in LONGEST names an existing test (rename or remove it there)`)
  if (!existsSync(BUILD)) { t.skip('no .test-build/ (npm run pretest makes it)'); return }
  const { alone, groups, long } = plan(TEST_FOLDERS.map((f) => join(BUILD, f)))
  const rel = (f: string): string => relative(BUILD, f).split(sep).join('/')
  const compiledFiles = TEST_FOLDERS.flatMap((folder) => testFiles(BUILD, folder, '.test.js'))
  assert.deepEqual([...alone, ...groups.flatMap((g) => g.files), ...long.flatMap((p) => p.files)].map(rel).concat(SEPARATE).sort(), compiledFiles.sort(), 'each file once, or in SEPARATE')
  assert.deepEqual(alone.map(rel).slice(0, GROUPS_AFTER), LONGEST.slice(0, GROUPS_AFTER), 'LONGEST\'s first files alone, in its order')
  for (const g of groups) assert.ok(g.files.length >= 1 && g.files.length <= GROUP_SIZE, `${g.name}: ${g.files.length} files`)
  // the others of LONGEST a few a process, dealt in a snake: process k gets ranks k, 2n-1-k, 2n+k … (n processes)
  const ranks = long.map((p) => p.files.map((f) => LONGEST.indexOf(rel(f))))
  const n = ranks.length
  const later = ranks.flat().sort((a, b) => a - b)
  assert.ok(later.every((r) => r >= GROUPS_AFTER), `only LONGEST's later files run together: ${JSON.stringify(ranks)}`)
  assert.equal(n, Math.ceil(later.length / LONG_TOGETHER), `${later.length} files, ${LONG_TOGETHER} a process`)
  ranks.forEach((r, k) => {
    const dealt = later.filter((_, i) => (Math.floor(i / n) % 2 === 0 ? i % n : n - 1 - (i % n)) === k)
    assert.deepEqual(r, dealt, `process ${k} of the long files: ${JSON.stringify(ranks)}`)
  })
  // a file with root-level hooks (they would run at its group's start and end) has a process of its own
  const hooked = compiledFiles.filter((f) => /^(before|after|beforeEach|afterEach)\(/m.test(readFileSync(join(ROOT, f.replace(/\.js$/, '.ts')), 'utf8')))
  assert.ok(hooked.length > 0, 'the suite has such files (test/statuses/mentions-e2e.test.ts)')
  for (const f of hooked) assert.ok(alone.map(rel).includes(f), `${f} runs alone`)
})

test('the files npm test leaves out run in CI: npm run test:bench-smoke runs SEPARATE\'s, and .ci/run runs that once', async () => {
  const { SEPARATE } = await testFilesModule()
  for (const f of SEPARATE) assert.ok(existsSync(join(ROOT, f.replace(/\.js$/, '.ts'))), `${f} in SEPARATE names an existing test`)
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  assert.match(scripts['test:bench-smoke'], /^npm run pretest && .*\$\(node scripts\/test-files\.mjs --separate \.test-build\/test \.test-build\/emulator\/test\)$/)
  const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8')
  assert.match(ci, /^ {2}npm test\n {2}npm run test:bench-smoke$/m, 'after npm test in the Node 20 part')
})

test('a group runs all its files under --test-force-exit, even when the next one loads after the tests before it are done', async (t) => {
  const { writeEntries } = await testFilesModule()
  const dir = mkdtempSync(join(tmpdir(), 'st-groups-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const folder = join(dir, '.test-build', 'test', 'area')
  mkdirSync(folder, { recursive: true })
  // the second file takes a while to load: the first one's test is long done by then
  writeFileSync(join(folder, 'a.test.js'), "import { test } from 'node:test'\ntest('first', () => {})\n")
  writeFileSync(join(folder, 'b.test.js'), "import { test } from 'node:test'\nawait new Promise((resolve) => setTimeout(resolve, 300))\ntest('second', () => {})\n")
  writeFileSync(join(folder, 'c.test.js'), "import { test } from 'node:test'\ntest('third', () => {})\n")
  const run = (entry: string): string => {
    // NODE_TEST_CONTEXT set (this runner's child) would make it skip as a test file's nested run
    const env = { ...process.env }
    delete env.NODE_TEST_CONTEXT
    const out = spawnSync(process.execPath, ['--test', '--test-force-exit', '--test-reporter=tap', resolve(entry)], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 })
    return out.stdout
  }
  const entries = writeEntries([join(dir, '.test-build', 'test')])
  assert.equal(entries.length, 1, 'three small files make one group')
  assert.match(entries[0], /\.test-build\/test-runs\/1-test-area\.test\.js$/, 'named by its place in the run (node --test sorts the files it is given) and its folder')
  const grouped = run(entries[0])
  for (const name of ['first', 'second', 'third']) assert.match(grouped, new RegExp(`^ok \\d+ - ${name}$`, 'm'), grouped)
  assert.match(grouped, /^# pass 4$/m, 'the three tests and the group\'s own, that every file loaded')
  // the same files imported one after the other with no such first test: the process ends after `first`
  const plain = join(dir, '.test-build', 'plain.test.js')
  writeFileSync(plain, ['a', 'b', 'c'].map((f) => `await import('./test/area/${f}.test.js')`).join('\n'))
  const lost = run(plain)
  assert.match(lost, /^ok \d+ - first$/m, lost)
  assert.doesNotMatch(lost, /- third$/m, 'without it the last file never ran')

  // a file that cannot load fails the group's first test, by name, and the others still run
  writeFileSync(join(folder, 'b.test.js'), "throw new Error('broken at load')\n")
  const broken = run(writeEntries([join(dir, '.test-build', 'test')])[0])
  assert.match(broken, /^not ok 1 - the group's 3 test files load$/m, broken)
  assert.match(broken, /area\/b\.test\.js failed to load: Error: broken at load/, broken)
  for (const name of ['first', 'third']) assert.match(broken, new RegExp(`^ok \\d+ - ${name}$`, 'm'), broken)
})
