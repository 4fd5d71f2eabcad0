/**
 * The emulator as its own process, like `npm run emulator` (emulator/src/cli.ts) but with the root key
 * and port chosen by the benchmark driver, so the driver can start the service at the same time instead
 * of waiting for the emulator to announce them. Prints the same JSON line when ready; SIGTERM stops it.
 *   EMULATOR_PORT      port of the WebSocket + control API server
 *   EMULATOR_ROOT      base64 of the root Curve25519 key pair: 32 bytes private, then 32 bytes public
 *   EMULATOR_CERT_DIR  reuse/generate <dir>/cert.pem + <dir>/key.pem
 */
import { join } from 'node:path'
import { startEmulator } from '@status-tracker/emulator'

const root = Buffer.from(process.env.EMULATOR_ROOT ?? '', 'base64')
const certDir = process.env.EMULATOR_CERT_DIR
if (root.length !== 64 || certDir === undefined) throw new Error('EMULATOR_ROOT (64 bytes, base64) and EMULATOR_CERT_DIR are required')
const emulator = await startEmulator({
  port: Number(process.env.EMULATOR_PORT ?? 0),
  root: { private: root.subarray(0, 32), public: root.subarray(32) },
  tls: { certFile: join(certDir, 'cert.pem'), keyFile: join(certDir, 'key.pem') }
})
const { wsUrl, controlUrl, rootPublicKey, caFile } = emulator
process.stdout.write(`${JSON.stringify({ wsUrl, controlUrl, rootPublicKey, caFile })}\n`)

let stopping = false
function stop (): void {
  if (stopping) return
  stopping = true
  setTimeout(() => process.exit(1), 5000).unref()
  emulator.stop().then(() => process.exit(0), () => process.exit(1))
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
