/**
 * `npm run cluster:demo`: two nodes of the service on one PostgreSQL and one Redis, wired to the emulator,
 * everything private to this run (loopback ports, a temporary folder) and stopped on Ctrl-C.
 *   PORT      first node's port (default 3001; the second uses PORT + 1)
 *   API_KEY   key for both nodes (default: a random one, printed)
 * PostgreSQL and Redis are started by the test harness (test/support): the Debian packages' binaries,
 * run as the `postgres` user when this runs as root.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pino } from 'pino'
import { startEmulator } from '@status-tracker/emulator'
import { startPostgres } from '../test/support/postgres.js'
import { skipWithoutRedis, startRedis } from '../test/support/redis.js'

const root = resolve(import.meta.dirname, '..')
const dir = mkdtempSync(join(tmpdir(), 'st-cluster-demo-'))
const port = Number(process.env.PORT ?? 3001)
const apiKey = process.env.API_KEY ?? randomBytes(18).toString('base64url')

console.log('starting PostgreSQL, Redis and the emulator…')
const postgres = await startPostgres()
// Redis where Debian's redis-server is installed; without it the nodes run on PostgreSQL alone
const redis = skipWithoutRedis === false ? await startRedis() : null
if (redis === null) console.log(`no Redis (${skipWithoutRedis}): the nodes run on PostgreSQL alone`)
const databaseUrl = await postgres.createDatabase('status_tracker')
const emulator = await startEmulator({
  tls: { certFile: join(dir, 'emulator-cert.pem'), keyFile: join(dir, 'emulator-key.pem') },
  logger: pino({ level: process.env.EMULATOR_LOG_LEVEL ?? 'warn', name: 'wa-emulator' }, process.stderr)
})

const nodes: Array<{ id: string, base: string, child: ChildProcess }> = []
let stopping = false
async function stop (code: number): Promise<void> {
  if (stopping) return
  stopping = true
  console.log('\nstopping the nodes, the emulator, Redis and PostgreSQL…')
  await Promise.all(nodes.map(async ({ child }) => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    await new Promise((resolve) => child.once('exit', resolve))
  }))
  await emulator.stop()
  await redis?.stop()
  await postgres.stop()
  rmSync(dir, { recursive: true, force: true })
  process.exit(code)
}
process.on('SIGINT', () => { void stop(0) })
process.on('SIGTERM', () => { void stop(0) })

for (const [i, id] of ['node-a', 'node-b'].entries()) {
  const nodePort = port + i
  const base = `http://127.0.0.1:${nodePort}`
  const env: Record<string, string> = {
    ...process.env as Record<string, string>,
    PORT: String(nodePort),
    HOST: '127.0.0.1',
    API_KEY: apiKey,
    DATA_DIR: join(dir, id),
    // every node reads and writes the same uploads folder (on several machines: a shared mount)
    UPLOAD_DIR: join(dir, 'uploads'),
    DATABASE_URL: databaseUrl,
    ...(redis === null ? {} : { REDIS_URL: redis.url }),
    NODE_ID: id,
    NODE_URL: base,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    WA_WEBSOCKET_URL: emulator.wsUrl,
    WA_TEST_TRUST_ROOT: emulator.rootPublicKey,
    NODE_EXTRA_CA_CERTS: emulator.caFile
  }
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'server.ts')], { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit'] })
  child.on('exit', (code) => { if (!stopping) { console.error(`${id} exited (${String(code)})`); void stop(1) } })
  nodes.push({ id, base, child })
}

const deadline = Date.now() + 60_000
for (const { id, base } of nodes) {
  for (;;) {
    const ok = await fetch(`${base}/api/health`, { headers: { 'x-api-key': apiKey } }).then((r) => r.ok, () => false)
    if (ok) break
    if (Date.now() > deadline) { console.error(`${id} did not answer within 60 s`); await stop(1) }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

const [A, B] = nodes.map((n) => n.base)
const C = emulator.controlUrl
const pick = (expr: string) => `node -pe 'JSON.parse(require("fs").readFileSync(0)).${expr}'`
console.log(`
Status Tracker cluster demo: two nodes on one PostgreSQL and one Redis, wired to the emulator (loopback only).

  node-a        ${A}/   (API docs ${A}/docs)
  node-b        ${B}/
  API key       ${apiKey}
  PostgreSQL    ${databaseUrl}
  Redis         ${redis?.url ?? 'none (PostgreSQL alone)'}
  Emulator      control API ${C}   platform ${emulator.wsUrl}

Try it (in another terminal):

  K=${apiKey}; A=${A}/api; B=${B}/api; C=${C}; J='content-type: application/json'
  # a session created through node-b lands on the node with the fewest sessions; its QR is asked from node-a
  curl -s -XPOST -H "$J" -d '{"number":"15550001111"}' $C/accounts
  curl -s -H "x-api-key: $K" -H "$J" -d '{"sessionId":"demo","sessionName":"Demo","authMethod":"qrcode"}' $B/sessions
  sleep 2; QR=$(curl -s -H "x-api-key: $K" $A/sessions/demo/qr-code | ${pick('data.qrCode')})
  curl -s -XPOST -H "$J" -d "{\\"qr\\":\\"$QR\\"}" $C/accounts/15550001111/scan
  curl -s -H "x-api-key: $K" $A/cluster           # who owns what
  # stop the owner (Ctrl-Z, or kill its process): within LEASE_TTL_MS + LEASE_RENEW_MS the other node has the session

Ctrl-C stops everything and removes ${dir}.
`)
