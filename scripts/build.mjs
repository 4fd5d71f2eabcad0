#!/usr/bin/env node
// Builds the service: a clean transpile of src/, plugins/ and schemas/ (the `include` of
// tsconfig.build.json) into dist/ (dist/src/server.js is what `npm start` runs), then a stamp file,
// written only when the build succeeded.
//
//   node scripts/build.mjs              build now (npm run build)
//   node scripts/build.mjs --if-stale   build only when dist/ is missing or older than a source (npm start's prestart)
//   node scripts/build.mjs --check      build nothing; exit 0 when up to date, 3 when a build is due
//
// The transpile is esbuild's, one file at a time, each .ts to a .js at the same relative path with a
// source map, as `scripts/test-build.mjs` compiles what the tests run; then the entry, dist/src/server.js,
// is replaced by a bundle of the service and its dependencies (bundleEntry, below): about 3 s in all where
// `tsc -p tsconfig.build.json` took 30-40 s on a quiet 2-core machine and 60-100 s on a busy one. Per-file
// transpiling is exact for this code because tsconfig sets `isolatedModules` (no const enums, no
// type-only re-exports without `type`). Type checking is `npm run typecheck` (`tsc --noEmit`), which CI
// runs before the tests.
//
// Plain JavaScript on purpose: it runs before anything is compiled, and when the build is up to date it
// needs neither esbuild, tsx nor typescript (a production install with `npm ci --omit=dev` has none).
// Several callers at once (benchmarks started side by side) are serialised by a lock folder.
/* global console, performance, process, setTimeout */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { tsFiles } from './ts-files.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const OUT = join(ROOT, 'dist')
const STAMP = join(OUT, '.build-stamp')
const ENTRY = join(OUT, 'src', 'server.js')
const LOCK = join(ROOT, '.build.lock')
/** what the build reads: a change to any of these makes dist/ stale */
const SOURCES = [join(ROOT, 'src'), join(ROOT, 'plugins'), join(ROOT, 'schemas'), join(ROOT, 'tsconfig.build.json'),
  // the entry bundles its dependencies (bundleEntry): a new lock file (an install that changed them, a pull)
  // makes dist/ stale too; not node_modules' own record, which the image's production install writes after its build
  join(ROOT, 'package-lock.json'),
  // and so does a new build script (what it bundles and how: a checkout that fixed the bundle rebuilds it)
  fileURLToPath(import.meta.url)]

const mode = process.argv[2] ?? '--always'
if (!['--always', '--if-stale', '--check'].includes(mode)) {
  console.error(`usage: node scripts/build.mjs [--if-stale | --check] (got ${mode})`)
  process.exit(2)
}

/** newest modification time (ms) under `path`, 0 when it does not exist */
function newest (path) {
  let st
  try { st = statSync(path) } catch { return 0 }
  if (!st.isDirectory()) return st.mtimeMs
  let max = st.mtimeMs // a deleted or renamed file changes its folder's time
  for (const entry of readdirSync(path)) max = Math.max(max, newest(join(path, entry)))
  return max
}

/** why a build is due, or null when dist/ is up to date */
function staleReason () {
  if (!existsSync(ENTRY) || !existsSync(STAMP)) return 'no build in dist/'
  const built = statSync(STAMP).mtimeMs
  const source = Math.max(...SOURCES.map(newest))
  return source > built ? 'sources changed since the last build' : null
}

async function build (reason) {
  let esbuild
  try {
    esbuild = await import(pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('esbuild')).href)
  } catch {
    throw new Error(`${reason}, and esbuild (the compiler, a dev dependency) is not installed: run \`npm ci\` (with dev dependencies) and \`npm run build\`, then \`npm ci --omit=dev\` if you want a production install`)
  }
  const started = performance.now()
  console.error(`[build] ${reason}: compiling src/, plugins/ and schemas/ into dist/ …`)
  const config = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8'))
  const { target, useDefineForClassFields, verbatimModuleSyntax } = config.compilerOptions
  rmSync(OUT, { recursive: true, force: true }) // clean: no compiled leftovers of moved or deleted sources
  const sources = config.include.flatMap((folder) => tsFiles(ROOT, folder))
  const failed = []
  await Promise.all(sources.map(async (rel) => {
    const src = join(ROOT, rel)
    const out = join(OUT, rel.replace(/\.ts$/, '.js'))
    let result
    try {
      result = await esbuild.transform(readFileSync(src, 'utf8'), {
        loader: 'ts',
        format: 'esm',
        target: String(target).toLowerCase(),
        platform: 'node',
        sourcemap: 'external',
        sourcefile: relative(dirname(out), src).split(sep).join('/'),
        tsconfigRaw: { compilerOptions: { target, useDefineForClassFields, verbatimModuleSyntax } }
      })
    } catch (err) {
      failed.push(`${rel}: ${err.message}`)
      return
    }
    mkdirSync(dirname(out), { recursive: true })
    writeFileSync(out, `${result.code}//# sourceMappingURL=${out.split(sep).pop()}.map\n`)
    writeFileSync(`${out}.map`, result.map)
  }))
  if (failed.length > 0) throw new Error(`esbuild failed on ${failed.length} file(s); dist/ is not marked as built:\n${failed.join('\n')}`)
  await bundleEntry(esbuild)
  writeFileSync(STAMP, `${new Date().toISOString()}\n`)
  console.error(`[build] ${sources.length} files done in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

/**
 * Packages the bundle leaves to Node's own loader at run time: native code (better-sqlite3 and its N-API twin,
 * sharp), what the service loads only on first use and is large (Baileys with libsignal, which patches/ changes
 * in node_modules, the S3 client, pg, ioredis and the socket.io Redis adapter, music-metadata, qrcode). A CommonJS
 * package the service loads lazily must be here (lazyCommonJsCheck, below).
 */
const EXTERNAL = ['better-sqlite3', 'better-sqlite3-napi', 'sharp', '@whiskeysockets/baileys', 'libsignal', '@aws-sdk/*', 'pg', 'pg-native', 'ioredis',
  '@socket.io/redis-adapter', 'music-metadata', 'qrcode']

/**
 * dist/src/server.js, the entry `npm start` runs, becomes one bundle of the service and its dependencies (the
 * lazily loaded parts as chunks beside it, `dist/src/bundle-*.js`, loaded when first imported as before). Node
 * 20 spends most of a start's module loading per file, not per byte: kysely's 262 files import in ~210 ms, the
 * same code as one file in ~22; the service's ~1,340 modules before it listens took 0.8-1.0 s, bundled ~0.36 s.
 * The per-file transpile above stays (the tests and tools import it). A bundled CommonJS file that names
 * `__dirname` or `__filename` (socket.io serving its client, the Swagger UI its files) gets
 * them as its own file's path in node_modules, found from the bundle's place: dist/src/ is two folders below
 * the package, where node_modules is.
 */
async function bundleEntry (esbuild) {
  const ownPath = {
    name: 'own-path',
    setup (build) {
      build.onLoad({ filter: /[\\/]node_modules[\\/].*\.c?js$/ }, (args) => {
        const code = readFileSync(args.path, 'utf8')
        if (!/\b__(dirname|filename)\b/.test(code)) return undefined
        const rel = relative(ROOT, args.path).split(sep).join('/')
        return { contents: `var __filename = __bundleJoin(__bundleRoot, ${JSON.stringify(rel)}), __dirname = __bundleDirname(__filename);\n${code}`, loader: 'js' }
      })
    }
  }
  const result = await esbuild.build({
    entryPoints: [join(ROOT, 'src', 'server.ts')],
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: join(OUT, 'src'),
    entryNames: '[name]',
    chunkNames: 'bundle-[name]-[hash]',
    sourcemap: true,
    external: EXTERNAL,
    // paths as the package sees them (a node_modules that is a link stays under the package), for own-path
    preserveSymlinks: true,
    tsconfig: join(ROOT, 'tsconfig.build.json'),
    plugins: [ownPath],
    // CommonJS dependencies call require() (Node's built-ins among them); ESM output has none of its own
    banner: {
      js: [
        "import { createRequire as __bundleCreateRequire } from 'node:module'",
        "import { dirname as __bundleDirname, join as __bundleJoin } from 'node:path'",
        "import { fileURLToPath as __bundleFileURLToPath } from 'node:url'",
        'const require = __bundleCreateRequire(import.meta.url)',
        "const __bundleRoot = __bundleFileURLToPath(new URL('../../', import.meta.url))"
      ].join('; ') + ';'
    },
    metafile: true,
    logLevel: 'silent'
  })
  lazyCommonJsCheck(result.metafile)
}

/**
 * A CommonJS package bundled as a lazily loaded chunk comes out as `export default require_x()`: its
 * `import()` then gives `default` alone, where Node's own loader also gives the named exports it finds in the
 * file (`const { createAdapter } = await import('@socket.io/redis-adapter')` was undefined in the bundle and the
 * service died at its start with REDIS_URL: CI, session 26). Such a package belongs in EXTERNAL: the build fails
 * and names it rather than leave the failure to the first start that takes that path.
 */
function lazyCommonJsCheck (metafile) {
  const lazy = new Set(Object.values(metafile.outputs).flatMap((out) => out.imports.filter((i) => i.kind === 'dynamic-import' && !i.external).map((i) => i.path)))
  const defaultOnly = Object.entries(metafile.outputs)
    .filter(([path, out]) => lazy.has(path) && out.exports.join() === 'default' && /(^|\/)node_modules\//.test(out.entryPoint ?? ''))
    .map(([, out]) => out.entryPoint)
  if (defaultOnly.length > 0) {
    throw new Error(`the bundle loads CommonJS package(s) lazily, whose import() would give \`default\` alone: ${defaultOnly.join(', ')}; add them to EXTERNAL in scripts/build.mjs`)
  }
}

function pidAlive (pid) {
  try { process.kill(pid, 0); return true } catch (err) { return err.code === 'EPERM' }
}

/** waits (up to 5 min) for the lock folder; a lock left by a dead process is taken over */
async function withLock (fn) {
  const deadline = Date.now() + 300_000
  for (;;) {
    try {
      mkdirSync(LOCK)
      writeFileSync(join(LOCK, 'pid'), String(process.pid))
      break
    } catch (err) {
      if (err.code !== 'EEXIST') throw err
      let owner = NaN
      try { owner = Number(readFileSync(join(LOCK, 'pid'), 'utf8')) } catch { /* being created or removed */ }
      if (Number.isInteger(owner) && owner > 0 && !pidAlive(owner)) { rmSync(LOCK, { recursive: true, force: true }); continue }
      if (Date.now() > deadline) throw new Error(`${LOCK} still held by ${owner} after 5 min`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
  try { await fn() } finally { rmSync(LOCK, { recursive: true, force: true }) }
}

if (mode === '--check') {
  const reason = staleReason()
  console.error(reason === null ? '[build] dist/ is up to date' : `[build] ${reason}`)
  process.exit(reason === null ? 0 : 3)
}
if (mode === '--if-stale' && staleReason() === null) process.exit(0)
try {
  await withLock(async () => {
    // another caller may have built while this one waited for the lock
    const reason = mode === '--always' ? 'npm run build' : staleReason()
    if (reason !== null) await build(reason)
  })
} catch (err) {
  console.error(`[build] ${err.message}`)
  process.exit(1)
}
