import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { importsOf, type Import } from '../support/imports.js'

// The test kit's direction (issue 34): bench/ imports the kit in test/support/, and nothing under test/
// imports bench/ (what a test needs from a benchmark belongs in the kit). A test may still run a benchmark
// as a process (test/bench/smoke-run.ts): that is not an import.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

function sourceFiles (dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(join(ROOT, dir))) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue
    const rel = join(dir, entry)
    if (statSync(join(ROOT, rel)).isDirectory()) out.push(...sourceFiles(rel))
    else if (/\.[cm]?[jt]s$/.test(rel)) out.push(rel)
  }
  return out
}

/** why a file's import breaks the rule, or null */
export function testImportsBench (file: string, imp: Import): string | null {
  if (!file.startsWith('test/') || !imp.spec.startsWith('.')) return null
  const target = relative(ROOT, resolve(ROOT, dirname(file), imp.spec))
  return target === 'bench' || target.startsWith('bench/') ? `test/ does not import bench/: ${imp.spec}` : null
}

test('nothing under test/ imports from bench/', () => {
  const broken: string[] = []
  for (const file of sourceFiles('test')) {
    for (const imp of importsOf(readFileSync(join(ROOT, file), 'utf8'))) {
      const why = testImportsBench(file, imp)
      if (why !== null) broken.push(`${file}:${imp.line} ${why}`)
    }
  }
  assert.deepEqual(broken, [])
})

test('the rule catches a test importing bench/ (so the test above can fail)', () => {
  const check = (file: string, source: string) => importsOf(source).map((imp) => testImportsBench(file, imp)).filter((v) => v !== null)
  assert.equal(check('test/statuses/x.test.ts', "import { startService } from '../../bench/lib/procs.js'\n").length, 1)
  assert.equal(check('test/helper.ts', "export { freePort } from '../bench/lib/ports.js'\n").length, 1)
  assert.equal(check('test/x/y.test.ts', "import type { Figure } from '../../bench/lib/bench.js'\n").length, 1)
  // (spelt in two parts, so this file's own scan does not read it as an import)
  assert.equal(check('test/x/y.test.ts', 'const m = await import' + "('../../bench/receipts.js')\n").length, 1)
  // allowed: the kit, and bench/ importing the kit
  assert.equal(check('test/x/y.test.ts', "import { spawnService } from '../support/service.js'\n").length, 0)
  assert.equal(check('bench/lib/procs.ts', "import { spawnNode } from '../../test/support/processes.js'\n").length, 0)
  assert.equal(check('test/x/y.test.ts', "import { a } from '../benchmarks.js'\n").length, 0)
})
