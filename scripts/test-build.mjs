#!/usr/bin/env node
// Compiles the TypeScript that the tests load (the tests, the test kit, the service, the emulator, the
// client, the benchmarks that test/bench/ runs) into .test-build/, one JavaScript file per source at the
// same relative path, each with a source map back to its .ts file. `npm test` runs the compiled files
// with plain `node --test` (its pretest runs this script): no loader hooks in the test processes.
//
// Why: on Node 20 a loader registered with `--import tsx` runs off the main thread, and every module of
// the app's graph crosses to it and back. That costs about 1.8 CPU s per test process (3.7 CPU s to load
// src/app.ts under tsx against 1.9 from compiled JavaScript, measured on this machine's kind), and the
// suite starts a process per test file. Transpiling once here takes a few seconds.
//
// What stays exact:
//   - paths: `import.meta.url`, `import.meta.dirname` and `import.meta.filename` are replaced by the
//     source file's own (esbuild's per-file `define`), so a test still finds the repository, its
//     fixtures and the .ts files it reads where they are;
//   - coverage: c8 follows the source maps to the .ts files (.c8rc.json names the compiled copies too);
//   - the workspace emulator package (whose exports name .ts files) is imported from its compiled copy.
// Only changed sources are compiled again; outputs whose source is gone are removed.
//
//   node scripts/test-build.mjs          compile what changed
//   node scripts/test-build.mjs --clean  remove .test-build/ first
/* global console, performance, process */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { tsFiles } from './ts-files.mjs'
import { transform, version as esbuildVersion } from 'esbuild'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const OUT = join(ROOT, '.test-build')
/** the folders whose TypeScript the tests import (directly or through the code they test) */
const FOLDERS = ['src', 'plugins', 'schemas', 'mcp', 'scripts', 'bench', 'test', 'emulator/src', 'emulator/test', 'client/src', 'client/scripts', 'client/test']
const SKIP = new Set(['node_modules', 'dist', '.certs', '.artifacts'])
/** workspace packages whose exports point at TypeScript: bare specifier → compiled file */
const WORKSPACE = workspaceExports('@status-tracker/emulator', 'emulator')

const started = performance.now()
// the outputs hold absolute paths (the define above) and follow this script's options: a moved checkout, an
// edited script or another esbuild version compiles everything again
const STAMP = join(OUT, '.stamp')
const stamp = `${ROOT}\n${esbuildVersion}\n${createHash('sha256').update(readFileSync(fileURLToPath(import.meta.url))).digest('hex')}\n`
if (process.argv.includes('--clean') || !existsSync(STAMP) || readFileSync(STAMP, 'utf8') !== stamp) rmSync(OUT, { recursive: true, force: true })

const sources = FOLDERS.flatMap((folder) => tsFiles(ROOT, folder, SKIP))
const expected = new Set()
let compiled = 0
await Promise.all(sources.map(async (rel) => {
  const src = join(ROOT, rel)
  const out = join(OUT, rel.replace(/\.ts$/, '.js'))
  expected.add(out)
  expected.add(`${out}.map`)
  if (existsSync(out) && statSync(out).mtimeMs >= statSync(src).mtimeMs && existsSync(`${out}.map`)) return
  const url = pathToFileURL(src).href
  const result = await transform(readFileSync(src, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    platform: 'node',
    sourcemap: 'external',
    sourcesContent: true,
    keepNames: true,
    minifyWhitespace: true,
    sourcefile: relative(dirname(out), src).split(sep).join('/'),
    tsconfigRaw: { compilerOptions: { target: 'ES2022', useDefineForClassFields: true, verbatimModuleSyntax: false } },
    define: {
      'import.meta.url': JSON.stringify(url),
      'import.meta.filename': JSON.stringify(src),
      'import.meta.dirname': JSON.stringify(dirname(src))
    }
  })
  let code = result.code
  for (const [specifier, target] of WORKSPACE) {
    const to = relative(dirname(out), target).split(sep).join('/')
    code = code.replaceAll(`"${specifier}"`, JSON.stringify(to.startsWith('.') ? to : `./${to}`))
  }
  mkdirSync(dirname(out), { recursive: true })
  writeFileSync(out, `${code}//# sourceMappingURL=${out.split(sep).pop()}.map\n`)
  writeFileSync(`${out}.map`, result.map)
  compiled++
}))
expected.add(STAMP)
const removed = prune(OUT)
const missing = unresolved()
if (missing.length > 0) {
  console.error(`[test-build] relative imports with no compiled file (add their folder to FOLDERS in scripts/test-build.mjs):\n  ${missing.join('\n  ')}`)
  process.exit(1)
}
writeFileSync(STAMP, stamp)
console.error(`[test-build] ${compiled} of ${sources.length} files compiled${removed > 0 ? `, ${removed} stale removed` : ''} in ${((performance.now() - started) / 1000).toFixed(1)} s`)

/** removes outputs whose source is gone (and folders left empty); returns how many files */
function prune (dir) {
  let n = 0
  if (!existsSync(dir)) return n
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      n += prune(path)
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true })
    } else if (!expected.has(path)) { rmSync(path); n++ }
  }
  return n
}

/** relative imports in the compiled files that name no file (a folder the tests reach but FOLDERS lacks) */
function unresolved () {
  const out = []
  for (const file of expected) {
    if (!file.endsWith('.js')) continue
    const code = readFileSync(file, 'utf8')
    for (const m of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)"(\.\.?\/[^"]+)"/g)) {
      if (!existsSync(resolve(dirname(file), m[1]))) out.push(`${relative(OUT, file)}: ${m[1]}`)
    }
  }
  return out
}

/** a workspace package's exports (`.` and subpaths) mapped to their compiled files */
function workspaceExports (name, folder) {
  const { exports } = JSON.parse(readFileSync(join(ROOT, folder, 'package.json'), 'utf8'))
  return Object.entries(exports)
    .filter(([, target]) => typeof target === 'string' && target.endsWith('.ts'))
    .map(([sub, target]) => [sub === '.' ? name : `${name}/${sub.slice(2)}`, join(OUT, folder, target.replace(/\.ts$/, '.js'))])
    // the longest specifier first, so `@status-tracker/emulator` does not rewrite inside a subpath
    .sort((a, b) => b[0].length - a[0].length)
}
