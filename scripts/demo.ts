/**
 * `npm run demo`: the emulator and the service wired to it, both on 127.0.0.1, plus a walk-through to paste.
 * Nothing here reaches the real platform.
 *
 * Every run starts clean: the emulator keeps its accounts in memory only, so the sessions, statuses and
 * uploads of an earlier run could never reconnect to it. The demo folder (DEMO_DATA_DIR, default
 * ./data/demo) is emptied at start except for the API key, which stays the same from run to run (a
 * dashboard tab and the printed block keep working); `--fresh` removes the key too.
 *   PORT           service port (default 3000)
 *   API_KEY        key to use (default: generated into <demo folder>/api-key on the first run)
 *   DEMO_DATA_DIR  the demo folder (default ./data/demo)
 */
import { spawn } from 'node:child_process'
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pino } from 'pino'
import { startEmulator } from '@status-tracker/emulator'
import { loadConfig } from '../src/config.js'
import { walkThrough } from './demo-walkthrough.js'

const root = resolve(import.meta.dirname, '..')
const demoDir = resolve(process.env.DEMO_DATA_DIR ?? join(root, 'data', 'demo'))
const fresh = process.argv.includes('--fresh')
mkdirSync(demoDir, { recursive: true, mode: 0o700 })
// A folder is emptied only when the demo made it (its mark, or the emulator certificate every demo wrote)
const MARK = '.status-tracker-demo'
const found = readdirSync(demoDir)
if (found.length > 0 && !found.includes(MARK) && !found.includes('emulator-cert.pem')) {
  console.error(`${demoDir} holds files the demo did not make, and the demo empties its folder at start: choose another (DEMO_DATA_DIR)`)
  process.exit(1)
}
// the emulator's certificate and the key survive a run; the database, uploads and the rest do not
const KEEP = fresh ? [MARK] : [MARK, 'api-key', 'emulator-cert.pem', 'emulator-key.pem']
for (const name of found) if (!KEEP.includes(name)) rmSync(join(demoDir, name), { recursive: true, force: true })
writeFileSync(join(demoDir, MARK), 'made by npm run demo (scripts/demo.ts), which empties this folder at start\n')

const port = Number(process.env.PORT ?? 3000)
const emulator = await startEmulator({
  tls: { certFile: join(demoDir, 'emulator-cert.pem'), keyFile: join(demoDir, 'emulator-key.pem') },
  logger: pino({ level: process.env.EMULATOR_LOG_LEVEL ?? 'warn', name: 'wa-emulator' }, process.stderr)
})

// The service reads the same settings it would in production, with the demo's folders and the emulator.
const env: Record<string, string> = {
  ...process.env as Record<string, string>,
  PORT: String(port),
  HOST: '127.0.0.1',
  DATA_DIR: demoDir,
  UPLOAD_DIR: join(demoDir, 'uploads'),
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  WA_WEBSOCKET_URL: emulator.wsUrl,
  WA_TEST_TRUST_ROOT: emulator.rootPublicKey,
  // media uploads go to the emulator over HTTPS with its self-signed certificate
  NODE_EXTRA_CA_CERTS: emulator.caFile
}
const { apiKey } = loadConfig(env, { envFile: false })
env.API_KEY = apiKey

// run in the demo folder, so a `.env` of the checkout (the service reads one from its working folder) does not
// reach the demo: its database, media store and the rest are the demo's own
env.TSX_TSCONFIG_PATH = join(root, 'tsconfig.json')
const service = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(root, 'src', 'server.ts')], { cwd: demoDir, env, stdio: ['ignore', 'inherit', 'inherit'] })
let stopping = false
async function stop (code: number): Promise<void> {
  if (stopping) return
  stopping = true
  // the service closes within 10 s of SIGTERM; waiting for it frees the port for the next run
  const exited = service.exitCode !== null || service.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => { service.once('exit', () => { resolve() }) })
  service.kill('SIGTERM')
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000).unref())])
  await emulator.stop()
  process.exit(code)
}
service.on('exit', (code) => { if (!stopping) { console.error(`service exited (${String(code)})`); void stop(1) } })
process.on('SIGINT', () => { void stop(0) })
process.on('SIGTERM', () => { void stop(0) })

const base = `http://127.0.0.1:${port}`
// a first start compiles the service with tsx: on a slow or busy machine that can take a while
console.log(`the emulator is up; waiting for the service on ${base} (a first start compiles it) …`)
const deadline = Date.now() + 120_000
for (;;) {
  const ok = await fetch(`${base}/api/health`, { headers: { 'x-api-key': apiKey } }).then((r) => r.ok, () => false)
  if (ok) break
  if (Date.now() > deadline) { console.error('the service did not answer within 120 s'); await stop(1) }
  await new Promise((resolve) => setTimeout(resolve, 250))
}

console.log(walkThrough({ apiKey, base, control: emulator.controlUrl, platform: emulator.wsUrl, demoDir }))
