/**
 * `npm run demo`: the emulator and the service wired to it, both on 127.0.0.1, plus a walk-through.
 * Nothing here reaches the real platform. Data lives in ./data/demo (removed with `--fresh`).
 *   PORT          service port (default 3000)
 *   API_KEY       key to use (default: generated into data/demo/api-key on first run)
 */
import { spawn } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pino } from 'pino'
import { startEmulator } from '@status-tracker/emulator'
import { loadConfig } from '../src/config.js'

const root = resolve(import.meta.dirname, '..')
const demoDir = join(root, 'data', 'demo')
if (process.argv.includes('--fresh')) rmSync(demoDir, { recursive: true, force: true })
mkdirSync(demoDir, { recursive: true })

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

const service = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'server.ts')], { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit'] })
let stopping = false
async function stop (code: number): Promise<void> {
  if (stopping) return
  stopping = true
  service.kill('SIGTERM')
  await emulator.stop()
  process.exit(code)
}
service.on('exit', (code) => { if (!stopping) { console.error(`service exited (${String(code)})`); void stop(1) } })
process.on('SIGINT', () => { void stop(0) })
process.on('SIGTERM', () => { void stop(0) })

const base = `http://127.0.0.1:${port}`
const deadline = Date.now() + 30_000
for (;;) {
  const ok = await fetch(`${base}/api/health`, { headers: { 'x-api-key': apiKey } }).then((r) => r.ok, () => false)
  if (ok) break
  if (Date.now() > deadline) { console.error('the service did not answer within 30 s'); await stop(1) }
  await new Promise((resolve) => setTimeout(resolve, 250))
}

const C = emulator.controlUrl
const pick = (expr: string) => `node -pe 'JSON.parse(require("fs").readFileSync(0)).${expr}'`
console.log(`
Status Tracker demo — the service is wired to the WhatsApp Web emulator (loopback only).

  Dashboard     ${base}/            (API key below)
  API docs      ${base}/docs
  API key       ${apiKey}
  Emulator      control API ${C}   platform ${emulator.wsUrl}

Walk-through (in another terminal):

  K=${apiKey}; B=${base}/api; C=${C}; J='content-type: application/json'
  # 1. a phone account in the emulator and a contact to receive statuses
  curl -s -XPOST -H "$J" -d '{"number":"15550001111"}' $C/accounts
  curl -s -XPOST -H "$J" -d '{"number":"15550002222"}' $C/contacts
  # 2. a QR session in the service, and the phone scanning its QR image
  curl -s -H "x-api-key: $K" -H "$J" -d '{"sessionId":"demo","sessionName":"Demo","authMethod":"qrcode"}' $B/sessions
  sleep 2; QR=$(curl -s -H "x-api-key: $K" $B/sessions/demo/qr-code | ${pick('data.qrCode')})
  curl -s -XPOST -H "$J" -d "{\\"qr\\":\\"$QR\\"}" $C/accounts/15550001111/scan
  curl -s -H "x-api-key: $K" $B/sessions/demo/connection-status
  # 3. post a status; the emulator's contact decrypts it
  curl -s -H "x-api-key: $K" -H "$J" -d '{"type":"text","content":"Hello from the demo","backgroundColor":"#FF1E88E5","font":1,"targetNumbers":"15550002222"}' $B/sessions/demo/send-status
  curl -s $C/statuses
  # 4. the contact views it; the service records the viewer (and pushes status-viewers-update)
  ID=$(curl -s $C/statuses | ${pick('at(-1).id')})
  curl -s -XPOST -H "$J" -d '{"viewer":"15550002222","type":"read"}' $C/statuses/$ID/views
  curl -s -H "x-api-key: $K" $B/sessions/demo/sent-statuses
  curl -s -H "x-api-key: $K" $B/sessions/demo/status-viewers/1

Ctrl-C stops both. Data: ${demoDir} (npm run demo -- --fresh starts clean).
`)
