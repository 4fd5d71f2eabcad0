/**
 * The one way to run the service as a real child process, for the tests (restarts, SIGKILL, logs, cluster
 * nodes) and the benchmarks alike: its own folder (its working directory, so no developer's .env is read)
 * holding its data and uploads, a port on 127.0.0.1, the kit's API key, and a wait until it answers.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { currentEnv, descriptorLinks, ensureBuilt, ROOT, spawnNode, tempDir, type Proc } from './processes.js'
import { freePort } from './ports.js'
import { sleep } from './wait.js'

/** The API key of every service the kit starts (in process or as a child), unless a test sets its own. */
export const API_KEY = 'test-api-key-0123456789abcdef'

/** Without an emulator the service dials a closed loopback port: it never reaches the real platform. */
export const NO_PLATFORM = 'ws://127.0.0.1:9/ws/chat'

/** what `npm start` runs after its prestart build */
export const SERVER_ENTRY = join(ROOT, 'dist', 'src', 'server.js')
const SERVER_SOURCE = join(ROOT, 'src', 'server.ts')

/**
 * Settings a child never takes from the driver's environment: where it lives, who it is, what it dials.
 * The caller's `env` (and the defaults below) set them; anything else (e.g. SPEED_TRICKS_OFF) is inherited.
 */
const PLACE = /^(API_KEY|DATA_DIR|UPLOAD_DIR|LOG_LEVEL|PORT|HOST|DATABASE_URL|REDIS_URL|NODE_URL|NODE_ID|CLUSTER_SECRET|ALLOW_PRIVATE_URLS|WA_.*)$/

export interface ServiceOptions {
  /**
   * its working directory; DATA_DIR and UPLOAD_DIR are `data` and `uploads` in it unless `env` says
   * otherwise. Default a new temporary folder, removed after `t` (or when the driver exits).
   */
  dir?: string
  /**
   * `built` (default): `node dist/src/server.js`, what `npm start` runs, built first when stale (the
   * benchmarks and the crash tests); `source`: `src/server.ts` under tsx, counted in the suite's coverage
   */
  from?: 'built' | 'source'
  /** the emulator it dials (WA_WEBSOCKET_URL, WA_TEST_TRUST_ROOT, and its CA as NODE_EXTRA_CA_CERTS) */
  emulator?: { wsUrl: string, rootPublicKey: string, caFile?: string }
  /** settings over the defaults (the service reads '' as unset) */
  env?: Record<string, string>
  /** default API_KEY */
  apiKey?: string
  /** default a free one; a restart passes the port of the run before */
  port?: number
  /** its log file is `<logDir>/<name>.log` (default `service`), appended to by a restart */
  name?: string
  /** default `dir` */
  logDir?: string
  nodeFlags?: string[]
  /** stopped (SIGTERM, then SIGKILL after 2 s) after this test */
  t?: TestContext
  /**
   * when it counts as started: `health` (default) once GET /api/health answers 200; `listening` once it
   * logged "Server listening" (needs LOG_LEVEL info or lower), for tests that read every request it logs
   */
  readyWhen?: 'health' | 'listening'
  /** default 60 s */
  readyTimeoutMs?: number
  /**
   * how often readiness is asked (default 50 ms: a poll is an HTTP request from a test process with coverage
   * on, and a restart can take seconds; the benchmarks time the start and ask every 20 ms)
   */
  readyPollMs?: number
}

export interface ServiceProc extends Proc {
  /** http://127.0.0.1:<port> */
  base: string
  port: number
  dir: string
  dataDir: string
  apiKey: string
  /** every line it wrote, stdout and stderr, in order of arrival */
  lines: string[]
  /** its stdout lines alone (the JSON log) */
  stdout: string[]
  stderr: string[]
  /** ms from spawn until it counted as started */
  readyMs: number
  /** performance.now() at spawn */
  spawnedAt: number
}

/**
 * Whether process `pid` holds the socket listening on 127.0.0.1:`port` (Linux, from /proc; null where there is
 * no /proc/net/tcp to tell). A port `freePort` gave out, or the one a restart takes again, can be taken meanwhile by
 * another test process's service, which answers the health poll with the same key: the child then dies on
 * EADDRINUSE a moment later, but the test would already be talking to the wrong service (seen once in a
 * whole run: a restarted service that "lost" a committed session).
 */
export function listensOn (pid: number, port: number): boolean | null {
  let table: string
  try { table = readFileSync('/proc/net/tcp', 'utf8') } catch { return null }
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`
  const inodes = new Set<string>()
  for (const line of table.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/)
    // local_address, state 0A (LISTEN), inode
    if (f[1] === local && f[3] === '0A') inodes.add(`socket:[${f[9]}]`)
  }
  if (inodes.size === 0) return false
  try {
    return descriptorLinks(pid).some((link) => link !== null && inodes.has(link))
  } catch {
    // the process is gone (its exit not yet seen by the parent): it holds nothing
    return false
  }
}

export async function spawnService (opts: ServiceOptions): Promise<ServiceProc> {
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? await freePort()
    try {
      return await spawnOn(opts, port)
    } catch (err) {
      // another process took the port between freePort() and the child's listen (the suite runs files side by
      // side): try another one, as startPostgres does; a port the caller chose is theirs to retry
      if (opts.port === undefined && attempt < 3 && err instanceof PortTaken) continue
      throw err
    }
  }
}

class PortTaken extends Error {}

async function spawnOn (opts: ServiceOptions, port: number): Promise<ServiceProc> {
  const from = opts.from ?? 'built'
  if (from === 'built') ensureBuilt()
  const apiKey = opts.apiKey ?? API_KEY
  const name = opts.name ?? 'service'
  let temp: ReturnType<typeof tempDir> | undefined
  const dir = opts.dir ?? (temp = tempDir('st-service-')).path
  const inherit: Record<string, string> = {}
  for (const [k, v] of Object.entries(currentEnv())) if (!PLACE.test(k)) inherit[k] = v
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    API_KEY: apiKey,
    DATA_DIR: join(dir, 'data'),
    UPLOAD_DIR: join(dir, 'uploads'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    RATE_LIMIT_MAX: '10000000',
    WA_WEBSOCKET_URL: opts.emulator?.wsUrl ?? NO_PLATFORM,
    WA_TEST_TRUST_ROOT: opts.emulator?.rootPublicKey ?? '',
    // the suite's CA path is relative to the repository, and the child runs elsewhere
    NODE_EXTRA_CA_CERTS: opts.emulator?.caFile ?? '',
    // the compiled copy is not what the suite measures coverage of
    ...(from === 'built' ? { NODE_V8_COVERAGE: '' } : {}),
    ...opts.env
  }
  const lines: string[] = []
  const stdout: string[] = []
  const stderr: string[] = []
  let listening = false
  const spawnedAt = performance.now()
  const proc = spawnNode(from === 'built' ? SERVER_ENTRY : SERVER_SOURCE, {
    inherit,
    env,
    logFile: join(opts.logDir ?? dir, `${name}.log`),
    cwd: dir,
    onStdoutLine: (line) => {
      lines.push(line)
      stdout.push(line)
      if (line.includes('Server listening')) listening = true
    },
    onStderrLine: (line) => { lines.push(line); stderr.push(line) },
    ...(opts.nodeFlags !== undefined && opts.nodeFlags.length > 0 ? { nodeFlags: opts.nodeFlags } : {})
  })
  opts.t?.after(async () => { await proc.stop(2000); temp?.rm() })
  const base = `http://127.0.0.1:${port}`
  const timeoutMs = opts.readyTimeoutMs ?? 60_000
  const deadline = Date.now() + timeoutMs
  /** what the last poll saw, for the message when the service is not ready in time */
  let lastPoll = 'no poll yet'
  const answers = async (): Promise<boolean> => {
    try {
      const res = await fetch(`${base}/api/health`, { headers: { 'x-api-key': apiKey }, signal: AbortSignal.timeout(5000) })
      lastPoll = `health answered ${res.status}`
      return res.ok
    } catch (err) {
      lastPoll = `health: ${err instanceof Error ? err.message : String(err)}`
      return false // not listening yet
    }
  }
  const ready = async (): Promise<boolean> => {
    if (opts.readyWhen === 'listening') return listening
    if (!await answers()) return false
    // a health answer counts only from this child (another service may hold the port: listensOn)
    const ours = listensOn(proc.child.pid ?? -1, port)
    if (ours === false) lastPoll += `, but port ${port} is not this child's`
    return ours !== false
  }
  for (;;) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
      const Failure = /EADDRINUSE/.test(proc.tail()) ? PortTaken : Error
      throw new Failure(`the service (${name}) exited (${proc.child.exitCode ?? proc.child.signalCode}) during start:\n${proc.tail()}`)
    }
    if (await ready()) break
    if (Date.now() > deadline) {
      await proc.stop(1000)
      throw new Error(`the service (${name}) was not ready after ${timeoutMs} ms (last poll: ${lastPoll}):\n${proc.tail()}`)
    }
    await sleep(opts.readyPollMs ?? 50)
  }
  return Object.assign(proc, { base, port, dir, dataDir: env.DATA_DIR, apiKey, lines, stdout, stderr, readyMs: performance.now() - spawnedAt, spawnedAt })
}
