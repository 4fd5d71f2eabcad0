/**
 * HTTP load for bench/reads.ts: autocannon in its own process (so its CPU is not the driver's), and the
 * three servers the service is compared with: the Express 5 + Baileys control doing the service's work
 * (express-control.ts), the plain Express + better-sqlite3 peer a user would write for the seed
 * (plain-peer.ts), and a bare Fastify app with the service's health answer and key check (bare-fastify.ts).
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../test/support/ports.js'
import { ROOT, spawnNode, track, type Proc } from '../../test/support/processes.js'
import { API_KEY } from '../../test/support/service.js'
import { cpuSeconds } from './procs.js'

const AUTOCANNON = fileURLToPath(import.meta.resolve('autocannon'))

export interface CannonResult {
  requests: { average: number, total: number }
  latency: { p50: number, p99: number, max: number }
  throughput: { average: number }
  errors: number
  timeouts: number
  non2xx: number
}

export async function autocannon (url: string, seconds: number, connections: number): Promise<CannonResult> {
  const child = track(spawn(process.execPath, [AUTOCANNON, '-j', '-c', String(connections), '-d', String(seconds), '-H', `x-api-key=${API_KEY}`, url], {
    stdio: ['ignore', 'pipe', 'pipe']
  }))
  let out = ''
  let err = ''
  child.stdout?.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr?.on('data', (c: Buffer) => { err += c.toString() })
  const timer = setTimeout(() => { child.kill('SIGKILL') }, (seconds + 30) * 1000)
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  clearTimeout(timer)
  if (code !== 0) throw new Error(`autocannon exited ${code}: ${err.slice(-500)}`)
  const r = JSON.parse(out) as CannonResult
  if (r.errors > 0 || r.non2xx > 0 || r.timeouts > 0) throw new Error(`${url}: ${r.errors} errors, ${r.non2xx} non-2xx, ${r.timeouts} timeouts`)
  return r
}

/** Load on one server, summed over its runs: req/s, worst p99, and the server's CPU per request. */
export interface Load { rps: number, total: number, p50: number, p99: number, max: number, mibPerS: number, cpuUs: number }

/** Runs `seconds` of autocannon on `url` and measures `pid`'s CPU meanwhile. */
export async function measure (pid: number, url: string, seconds: number): Promise<Load> {
  const cpu0 = cpuSeconds(pid)
  const r = await autocannon(url, seconds, 10)
  const cpuUs = (cpuSeconds(pid) - cpu0) / Math.max(1, r.requests.total) * 1e6
  return {
    rps: r.requests.average, total: r.requests.total, p50: r.latency.p50, p99: r.latency.p99, max: r.latency.max,
    mibPerS: r.throughput.average / 1024 / 1024, cpuUs
  }
}

export function combine (runs: Load[]): Load {
  const total = runs.reduce((n, r) => n + r.total, 0)
  return {
    rps: runs.reduce((n, r) => n + r.rps, 0) / runs.length,
    total,
    p50: Math.max(...runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    max: Math.max(...runs.map((r) => r.max)),
    mibPerS: runs.reduce((n, r) => n + r.mibPerS, 0) / runs.length,
    cpuUs: runs.reduce((n, r) => n + r.cpuUs * r.total, 0) / Math.max(1, total)
  }
}

/** A helper server (TypeScript, under tsx) that prints `ready` once listening; its other lines go to `onLine`. */
async function startHelper (
  script: string, name: string, dir: string, env: Record<string, string>, onLine: (line: string) => void = () => undefined
): Promise<Proc & { base: string }> {
  const port = await freePort()
  let ready: () => void = () => undefined
  const started = new Promise<void>((resolve) => { ready = resolve })
  const proc = spawnNode(join(ROOT, 'bench', 'lib', script), {
    env: { PORT: String(port), ...env },
    logFile: join(dir, `${name}.log`),
    onStdoutLine: (line) => { if (line === 'ready') ready(); else onLine(line) }
  })
  const limit = setTimeout(() => { void proc.stop(1000) }, 60_000)
  try {
    await Promise.race([started, proc.exited.then(() => { throw new Error(`${name} exited:\n${proc.tail()}`) })])
  } finally {
    clearTimeout(limit)
  }
  return Object.assign(proc, { base: `http://127.0.0.1:${port}` })
}

/** `healthJson`: one health answer of the service, which the bare app answers with fresh timestamp and uptime */
export async function startBareFastify (dir: string, healthJson: string): Promise<Proc & { base: string }> {
  return await startHelper('bare-fastify.ts', 'bare-fastify', dir, { API_KEY, HEALTH_JSON: healthJson })
}

export interface ControlOptions {
  dir: string
  dbFile: string
  /** with a Baileys socket on the emulator: where it connects, and how to get its QR code scanned */
  baileys?: { wsUrl: string, rootPublicKey: string, scan: (qr: string) => Promise<void> }
}

/** The Express control (same work as the service); with `baileys`, resolves once its socket is linked and open. */
export async function startExpressControl (opts: ControlOptions): Promise<Proc & { base: string }> {
  return await startControl('express-control.ts', 'express-control', opts)
}

/** The plain peer (seed-shaped answers, simple queries); with `baileys`, resolves once its socket is open. */
export async function startPlainPeer (opts: ControlOptions): Promise<Proc & { base: string }> {
  return await startControl('plain-peer.ts', 'plain-peer', opts)
}

async function startControl (script: string, name: string, opts: ControlOptions): Promise<Proc & { base: string }> {
  let opened: () => void = () => undefined
  const open = new Promise<void>((resolve) => { opened = resolve })
  let scanning: Promise<void> | undefined
  const env: Record<string, string> = { API_KEY, DB_FILE: opts.dbFile }
  if (opts.baileys !== undefined) {
    Object.assign(env, { WA_WEBSOCKET_URL: opts.baileys.wsUrl, WA_TEST_TRUST_ROOT: opts.baileys.rootPublicKey, AUTH_DIR: join(opts.dir, `${name}-auth`) })
  }
  const proc = await startHelper(script, name, opts.dir, env, (line) => {
    if (line.startsWith('QR ') && scanning === undefined) {
      scanning = opts.baileys?.scan(line.slice(3)).catch((err: unknown) => { console.error(`[${name}] scanning its QR code failed: ${String(err)}`) })
    }
    if (line === 'OPEN') opened()
  })
  if (opts.baileys !== undefined) {
    let timer: NodeJS.Timeout | undefined
    await Promise.race([open, new Promise((_resolve, reject) => { timer = setTimeout(() => { reject(new Error(`the ${name} Baileys socket did not open in 60 s:\n${proc.tail()}`)) }, 60_000) })])
      .finally(() => { clearTimeout(timer) })
  }
  return proc
}
