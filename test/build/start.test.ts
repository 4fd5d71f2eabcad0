import { spawn, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { test } from 'node:test'
import assert from 'node:assert/strict'

// `npm start` from a fresh checkout: a copy of what git tracks for the service (no dist/, no data),
// sharing the installed node_modules. The prestart compiles src/ into dist/, then the compiled
// server answers the API, the dashboard and the OpenAPI document.

const ROOT = resolve(import.meta.dirname, '..', '..')
const KEY = 'start-test-key-0123456789abcdef'
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }

/** `npm` as the suite's own runner was started (npm_execpath), else from PATH */
function npm (args: string[]): [string, string[]] {
  const cli = process.env.npm_execpath
  return cli !== undefined && /\.[cm]?js$/.test(cli) ? [process.execPath, [cli, ...args]] : ['npm', args]
}

test('npm start on a fresh checkout builds dist/ and serves the API, the dashboard and the docs from it', { timeout: 170_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'start-test-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const app = join(dir, 'app')
  for (const entry of ['src', 'plugins', 'schemas', 'public', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.build.json']) cpSync(join(ROOT, entry), join(app, entry), { recursive: true })
  symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'), 'dir')
  assert.equal(existsSync(join(app, 'dist')), false)

  // PORT=0: the server takes a port of its own and says which in its log. A port picked by the test
  // would stay unbound through the build (30-40 s), long enough for another test's server to take it
  // and answer in its place (CI, session 12).
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    API_KEY: KEY,
    DATA_DIR: join(dir, 'data'),
    UPLOAD_DIR: join(dir, 'uploads'),
    LOG_LEVEL: 'info',
    WA_WEBSOCKET_URL: 'ws://127.0.0.1:9/ws/chat'
  }
  // the compiled copy is not what this suite measures coverage of; the suite's CA file is a relative path
  delete env.NODE_V8_COVERAGE
  delete env.NODE_EXTRA_CA_CERTS
  const [cmd, args] = npm(['start'])
  // its own process group: npm, the prestart and the server all stop together
  const child = spawn(cmd, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let output = ''
  child.stdout.on('data', (c: Buffer) => { output += c.toString() })
  child.stderr.on('data', (c: Buffer) => { output += c.toString() })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const killGroup = (signal: NodeJS.Signals): void => {
    try { process.kill(-(child.pid ?? 0), signal) } catch { /* already gone */ }
  }
  t.after(() => { killGroup('SIGKILL') })

  const deadline = Date.now() + 150_000
  let base: string | undefined
  while (base === undefined) {
    if (child.exitCode !== null) assert.fail(`npm start exited (${child.exitCode}) before listening:\n${output.slice(-4000)}`)
    if (Date.now() > deadline) assert.fail(`npm start did not listen within 150 s:\n${output.slice(-4000)}`)
    base = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/.exec(output)?.[1]
    if (base === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const health = await fetch(`${base}/api/health`, { headers: { 'x-api-key': KEY } })

  assert.ok(existsSync(join(app, 'dist', 'src', 'server.js')), 'the prestart compiled the server')
  assert.match(output, /compiling src\/, plugins\/ and schemas\/ into dist\//)
  assert.equal(health.status, 200)
  const body = await health.json() as { success: boolean, data: { status: string, version: string, uptime: number, timestamp: string } }
  assert.equal(body.success, true)
  assert.equal(body.data.status, 'healthy')
  assert.equal(body.data.version, version)
  assert.equal(typeof body.data.uptime, 'number')
  assert.equal((await fetch(`${base}/api/health`)).status, 401)

  const page = await fetch(`${base}/`)
  assert.equal(page.status, 200)
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
  assert.match(await page.text(), /<title>Status Tracker<\/title>/)
  assert.equal((await fetch(`${base}/app.js`)).status, 200)

  const docs = await fetch(`${base}/docs/json`)
  assert.equal(docs.status, 200)
  const openapi = await docs.json() as { openapi: string, info: { version: string }, paths: Record<string, unknown> }
  assert.match(openapi.openapi, /^3\./)
  assert.equal(openapi.info.version, version)
  assert.ok('/api/health' in openapi.paths)

  // dist/src/server.js is a bundle (scripts/build.mjs): the packages that serve files from their own folders
  // in node_modules still find them (socket.io its client, the Swagger UI its page's files)
  const client = await fetch(`${base}/socket.io/socket.io.js`)
  assert.equal(client.status, 200)
  assert.match(await client.text(), /Socket\.IO v\d/)
  const uiPage = await (await fetch(`${base}/docs/`)).text()
  const css = /href="\.?\/?(?:docs\/)?(static\/[^"]+\.css)"/.exec(uiPage)?.[1]
  assert.ok(css !== undefined, `the docs page names its stylesheet:\n${uiPage.slice(0, 2000)}`)
  const sheet = await fetch(`${base}/docs/${css}`)
  assert.equal(sheet.status, 200)
  assert.ok((await sheet.text()).length > 10_000, 'the Swagger UI stylesheet is served whole')
  assert.equal((await fetch(`${base}/docs/yaml`)).status, 200)
  const bundle = readFileSync(join(app, 'dist', 'src', 'server.js'), 'utf8')
  // (a boolean: a failing match would print the whole 5 MB file)
  assert.ok(bundle.includes('// node_modules/kysely/'), 'kysely is inside the bundle, not imported from node_modules')

  killGroup('SIGTERM')
  const timer = setTimeout(() => { killGroup('SIGKILL') }, 15_000)
  await exited
  clearTimeout(timer)

  // the prestart again: nothing to do, and quick, until a source is newer than the build
  const check = (): number | null => spawnSync(process.execPath, [join(app, 'scripts', 'build.mjs'), '--check'], { cwd: app, timeout: 30_000 }).status
  assert.equal(check(), 0)
  const later = new Date(Date.now() + 60_000)
  // the bundle holds the dependencies: a newer lock file (an install or a pull that changed them) is a build due;
  // and so is a newer build script (a checkout that changed what is bundled, e.g. a package left to Node's loader)
  for (const input of [join(app, 'package-lock.json'), join(app, 'scripts', 'build.mjs')]) {
    const { atime, mtime } = statSync(input)
    utimesSync(input, later, later)
    assert.equal(check(), 3, `${input} newer than the build`)
    utimesSync(input, atime, mtime)
    assert.equal(check(), 0)
  }
  utimesSync(join(app, 'src', 'server.ts'), later, later)
  assert.equal(check(), 3)
})
