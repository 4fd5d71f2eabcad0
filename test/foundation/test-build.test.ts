import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
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

test('scripts/test-files.mjs lists every compiled test file once, the longest first, and each file it names exists', async (t) => {
  const { LONGEST, ordered } = await import(pathToFileURL(join(ROOT, 'scripts', 'test-files.mjs')).href) as { LONGEST: string[], ordered: (folders: string[]) => string[] }
  for (const long of LONGEST) assert.ok(existsSync(join(ROOT, long.replace(/\.js$/, '.ts'))), `${long} in LONGEST names an existing test (rename or remove it there)`)
  if (!existsSync(BUILD)) { t.skip('no .test-build/ (npm run pretest makes it)'); return }
  const files = ordered(TEST_FOLDERS.map((f) => join(BUILD, f))).map((f) => relative(BUILD, f).split(sep).join('/'))
  const compiledFiles = TEST_FOLDERS.flatMap((folder) => testFiles(BUILD, folder, '.test.js'))
  assert.deepEqual([...files].sort(), compiledFiles.sort())
  assert.deepEqual(files.slice(0, LONGEST.length), LONGEST, 'the files of LONGEST first, in its order')
})
