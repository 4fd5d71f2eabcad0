#!/usr/bin/env tsx
/**
 * `npm run emulator` (or `npm start` in emulator/, or the `wa-emulator` bin): run the emulator as a
 * process. Prints one JSON line on stdout when ready ({ wsUrl, controlUrl, mediaUrl, rootPublicKey,
 * caFile }); logs go to stderr, console output of its libraries too (at debug). See emulator/README.md.
 *   EMULATOR_PORT        port of the WebSocket + control API server (default 0 = any)
 *   EMULATOR_MEDIA_PORT  port of the HTTPS media server (default 0 = any)
 *   EMULATOR_CERT_DIR    reuse/generate <dir>/cert.pem + <dir>/key.pem (default: a fresh temp dir)
 *   EMULATOR_LOG_LEVEL   pino level for stderr (default info)
 */
import { join, resolve } from 'node:path'
import { format } from 'node:util'
import { destination, pino } from 'pino'
import { startEmulator } from './index.js'

function portFromEnv (name: string): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return 0
  const port = Number(raw)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`${name} must be a port number, got ${JSON.stringify(raw)}`)
  }
  return port
}

const logger = pino({ level: process.env.EMULATOR_LOG_LEVEL ?? 'info', name: 'wa-emulator' }, destination(2))
// stdout is the ready line only: what dependencies print (libsignal dumps whole session records with
// console.info/warn) goes to the log at debug
for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
  console[method] = (...args: unknown[]) => { logger.debug({ source: 'console', method }, format(...args)) }
}
const certDir = process.env.EMULATOR_CERT_DIR
const emulator = await startEmulator({
  port: portFromEnv('EMULATOR_PORT'),
  mediaPort: portFromEnv('EMULATOR_MEDIA_PORT'),
  tls: certDir ? { certFile: join(resolve(certDir), 'cert.pem'), keyFile: join(resolve(certDir), 'key.pem') } : undefined,
  logger
})

process.stdout.write(
  `${JSON.stringify({
    wsUrl: emulator.wsUrl,
    controlUrl: emulator.controlUrl,
    mediaUrl: emulator.mediaUrl,
    rootPublicKey: emulator.rootPublicKey,
    caFile: emulator.caFile
  })}\n`
)

let stopping = false
const shutdown = (signal: NodeJS.Signals) => {
  if (stopping) return
  stopping = true
  logger.info({ signal }, 'stopping')
  const force = setTimeout(() => {
    logger.error('stop timed out')
    process.exit(1)
  }, 5_000)
  force.unref()
  emulator.stop().then(
    () => {
      process.exitCode = 0
    },
    (error) => {
      logger.error({ err: error }, 'stop failed')
      process.exitCode = 1
    }
  )
}
process.once('SIGINT', shutdown)
process.once('SIGTERM', shutdown)
