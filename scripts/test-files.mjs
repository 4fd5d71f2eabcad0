#!/usr/bin/env node
// Prints what `npm test` hands `node --test`: the five longest test files each in its own process, first,
// then the other test files in groups, each group one process that imports its files one after the other,
// then the other long files three a process (each process's entry file is written here, under
// .test-build/test-runs/).
//
// Why groups: a test process pays about 2 CPU s before its first test (loading the app's module graph and
// warming it up: 2.2 CPU s for a file that builds the app once, 0.15 CPU s for each further build in the
// same process), and most of the ~190 files run for a few seconds. 50 files of test/db, test/foundation
// and test/platform took 185 CPU s as 50 processes and 83 CPU s as one (session 18, this machine's kind);
// with coverage on, a process that loads the app and the emulator and builds the app once costs about
// 4 CPU s (session 19), so 36 processes became 19 when the groups grew from 12 files to 24 and LONGEST's
// files after its first five went three to a process. A group runs its files' tests in order, as each file
// alone does; what a file leaves behind in the process (a module's state, an env setting) reaches the files
// after it, so a file whose tests need a process of their own says so: it holds root-level hooks
// (before/after outside any test: they would run at the group's start and end), which put it in a process
// alone here.
//
//   node scripts/test-files.mjs <folder> [folder …]              the entries, one a line
//   node scripts/test-files.mjs --separate <folder> [folder …]   SEPARATE's files (not in npm test)
//
// `node --test` sorts the files it is given by path and starts them in that order, `--test-concurrency` at
// a time, so a long one started last makes a tail in which one core runs it alone. The entries' names carry
// the order (writeEntries): LONGEST's five longest files start first, then the groups, then the rest of
// LONGEST three a process (plan). LONGEST comes from session 18's measurement at a89ac4c (each file alone in its
// process, two at a time, nothing else running): the files over 18 s of wall, the longest first. Its order
// need not be exact: a file missing from it only runs in a group; a file named here and gone is skipped,
// and test/foundation/test-build.test.ts fails on it, so the list follows renames.
/* global console, process */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/** paths relative to the compiled tree's root (.test-build/), the test sources' own paths with .js */
export const LONGEST = [
  'test/uploads/s3.test.js',
  'test/audiences/saved-many-e2e.test.js',
  'test/bench/soak.test.js',
  'test/cluster/two-nodes.test.js',
  'test/cluster/rebalance.test.js',
  'test/durability/schedules-sigkill.test.js',
  'test/demo/walkthrough.test.js',
  'test/statuses/contact-statuses-e2e.test.js',
  'test/events/webhook-sigkill.test.js',
  'test/cluster/forwarding.test.js',
  'test/durability/insights-expiry-sigkill-pg.test.js',
  'test/statuses/send-crash.test.js',
  'test/cluster/schedules.test.js',
  'test/durability/receipts-sigkill-pg.test.js',
  'test/dashboard/audiences.test.js',
  'test/durability/insights-expiry-sigkill.test.js',
  'test/dashboard/schedules.test.js',
  'test/sessions/paced-start.test.js',
  'test/durability/receipts-sigkill.test.js',
  'test/schedules/e2e.test.js',
  'test/durability/contact-statuses-sigkill.test.js'
]

/**
 * Test files `npm test` leaves out: the smoke run of `npm run bench`'s scripts (every script but the soak,
 * with tiny sizes). They check the benchmark, not the service (the processes they start collect no
 * coverage), and take about 190 CPU s, a fifth of the suite's: `npm run test:bench-smoke` runs them (CI
 * does, once, after `npm test` on Node 20). The soak's smoke variant (test/bench/soak.test.ts) stays in
 * `npm test`.
 * Also the emulator's own scale check (emulator/test/scale.test.ts: 1,000 contacts, one status, 10,000
 * receipts through a bare Baileys socket): about 15 CPU s, and in whole `npm test` runs on two busy cores it
 * failed three times in six, every encryption of its post failing (never in its own runs, nor in its group's
 * alone); it keeps Baileys' lines to say why when it fails again.
 */
export const SEPARATE = [
  'test/bench/smoke-reads.test.js',
  'test/bench/smoke-cluster.test.js',
  'test/bench/smoke.test.js',
  'test/bench/smoke-scale.test.js',
  'emulator/test/scale.test.js'
]

/** the index in `list` (paths relative to .test-build/) of the name `file` ends with, or -1 */
const rankIn = (list, file) => list.findIndex((name) => file.endsWith(`/${name}`) || file === name)

/** the *.test.js files under `dir`, sorted */
function testFiles (dir) {
  const out = []
  let entries
  try { entries = readdirSync(dir, { withFileTypes: true }) } catch { return out }
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...testFiles(path))
    else if (entry.name.endsWith('.test.js')) out.push(path)
  }
  return out.sort()
}

/** the files under `folders`, those of LONGEST first in its order, then the others alphabetically */
export function ordered (folders) {
  const all = folders.flatMap((folder) => testFiles(folder)).sort().filter((f) => !isSeparate(f))
  const rank = (file) => rankIn(LONGEST, file)
  const first = all.filter((f) => rank(f) >= 0).sort((a, b) => rank(a) - rank(b))
  return [...first, ...all.filter((f) => rank(f) < 0)]
}

const isSeparate = (file) => rankIn(SEPARATE, file) >= 0

/**
 * LONGEST's first files, those over 40 s, run alone and start first. The groups come next: a group takes
 * 70-100 CPU s, more than three of LONGEST's other files together (45-65), and those then fill the end of
 * the run instead of a group running alone.
 */
export const GROUPS_AFTER = 5

/**
 * at most this many files a group. A process costs about 4 CPU s before its first test (with coverage:
 * loading the app and the emulator, building the app once; session 19), so fewer, larger groups cost less;
 * the long files run after the groups keep the end of the run short.
 */
export const GROUP_SIZE = 24

/** LONGEST's files after its first GROUPS_AFTER run this many a process */
export const LONG_TOGETHER = 3

/** a root-level hook in a test's source: `before(`/`after(`/… at the start of a line, outside any test */
const ROOT_HOOK = /^(before|after|beforeEach|afterEach)\(/m

/**
 * The entries for `node --test`: LONGEST's first GROUPS_AFTER files and those with root-level hooks alone
 * (`alone`), LONGEST's other files LONG_TOGETHER a process (`long`: dealt in a snake, the longest to the
 * first process, the next to the second … and back from the last, so each process gets about as much), the
 * others in groups of at most GROUP_SIZE in alphabetical order (`groups`). Groups and long runs are each a
 * name and its files.
 */
export function plan (folders) {
  const files = ordered(folders)
  const hooked = (f) => ROOT_HOOK.test(readFileSync(sourceOf(f), 'utf8'))
  const rank = (f) => rankIn(LONGEST, f)
  const alone = files.filter((f) => (rank(f) >= 0 && rank(f) < GROUPS_AFTER) || hooked(f))
  const later = files.filter((f) => rank(f) >= GROUPS_AFTER && !alone.includes(f))
  const bins = Math.ceil(later.length / LONG_TOGETHER)
  const dealt = Array.from({ length: bins }, () => [])
  later.forEach((f, i) => {
    const lap = Math.floor(i / bins)
    dealt[lap % 2 === 0 ? i % bins : bins - 1 - (i % bins)].push(f)
  })
  const long = dealt.map((members) => ({ name: area(members[0], true), files: members }))
  const rest = files.filter((f) => rank(f) < 0 && !alone.includes(f))
  const count = Math.ceil(rest.length / GROUP_SIZE)
  const groups = []
  for (let i = 0; i < count; i++) {
    // as even as the count allows: 17 files make groups of 6, 6 and 5, not 8, 8 and 1
    const members = rest.slice(Math.round(i * rest.length / count), Math.round((i + 1) * rest.length / count))
    groups.push({ name: area(members[0]), files: members })
  }
  return { alone, groups, long }
}

/**
 * A run's name: the folder of a group's first file (`test-statuses` for a file of test/statuses/), or a lone
 * file's folder and name (`test-uploads-s3`)
 */
function area (file, withName = false) {
  const parts = file.split(sep)
  const at = parts.lastIndexOf('.test-build')
  const folder = parts.slice(at + 1, -1).slice(0, 2)
  return [...folder, ...(withName ? [basename(file, '.test.js')] : [])].join('-') || basename(file, '.test.js')
}

/**
 * Writes an entry file for each process into `<build>/test-runs/` (the folder emptied first) and returns
 * them in the order they should start. `node --test` sorts the files it is given by path (Node 20's
 * createTestFileList) and starts them in that order, so the order is in the names: `NN-…`. A file that runs
 * alone gets an entry that only imports it (its process is the same as the file run directly); a group's
 * entry imports its files in order (groupEntry). A failure's stack still names the test file (and, through
 * its source map, the .ts line).
 */
export function writeEntries (folders) {
  const { alone, groups, long } = plan(folders)
  const all = [...alone, ...groups.flatMap((g) => g.files), ...long.flatMap((p) => p.files)]
  if (all.length === 0) return []
  const dir = join(buildRoot(all[0]), 'test-runs')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const isFirst = (f) => rankIn(LONGEST.slice(0, GROUPS_AFTER), f) >= 0
  const lone = (f) => ({ name: area(f, true), files: [f], lone: true })
  const runs = [...alone.filter(isFirst).map(lone), ...groups, ...long, ...alone.filter((f) => !isFirst(f)).map(lone)]
  const digits = String(runs.length).length
  return runs.map(({ name, files, lone }, i) => {
    const entry = join(dir, `${String(i + 1).padStart(digits, '0')}-${name}.test.js`)
    const paths = files.map((f) => relative(dir, f).split(sep).join('/'))
    writeFileSync(entry, lone === true
      ? `// written by scripts/test-files.mjs: this test file in a process of its own\nawait import(${JSON.stringify(paths[0])})\n`
      : groupEntry(paths))
    return relative(process.cwd(), entry)
  })
}

/**
 * A group's entry. Its first test waits until every file is imported: node:test runs a process's top-level
 * tests one at a time in the order they were declared, so the files' tests queue behind it and start once
 * all are declared. Without it, `--test-force-exit` ends the process as soon as the tests declared so far
 * are done, which can be while the next file is still loading (the files after it then never run). That
 * test fails, naming each file that cannot be imported (the others still run).
 */
export function groupEntry (paths) {
  return `// written by scripts/test-files.mjs: these test files run one after the other in this process
import { test } from 'node:test'
const files = ${JSON.stringify(paths, null, 2)}
let loaded
const imported = new Promise((resolve) => { loaded = resolve })
test(\`the group's \${files.length} test files load\`, async () => { const failed = await imported; if (failed) throw failed })
const failures = []
for (const file of files) {
  try { await import(file) } catch (err) { failures.push(\`\${file} failed to load: \${err?.stack ?? err}\`) }
}
loaded(failures.length > 0 ? new Error(failures.join('\\n')) : undefined)
`
}

/** a compiled test's TypeScript source (the compiled file is minified: its lines say nothing), else itself */
function sourceOf (file) {
  const build = buildRoot(file)
  const source = join(dirname(build), relative(build, resolve(file)).replace(/\.js$/, '.ts'))
  return existsSync(source) ? source : file
}

/** the compiled tree's root: the folder named .test-build above a test file */
function buildRoot (file) {
  let dir = dirname(resolve(file))
  while (basename(dir) !== '.test-build' && dirname(dir) !== dir) dir = dirname(dir)
  if (basename(dir) !== '.test-build') throw new Error(`${file} is not under a .test-build/ folder`)
  return dir
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const separate = process.argv[2] === '--separate'
  const folders = process.argv.slice(separate ? 3 : 2)
  if (folders.length === 0) {
    console.error('usage: node scripts/test-files.mjs [--separate] <folder> [folder …]')
    process.exit(2)
  }
  // --separate: SEPARATE's files under the folders (npm run test:bench-smoke)
  console.log((separate ? folders.flatMap((folder) => testFiles(folder)).filter(isSeparate) : writeEntries(folders)).join('\n'))
}
