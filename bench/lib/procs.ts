/**
 * Child processes of a benchmark: the emulator and the service, each its own Node process on
 * 127.0.0.1. Every child is tracked and killed when the driver exits, whatever the reason.
 * The service is what `npm start` runs: the compiled dist/src/server.js (built first when stale).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from './ports.js'

export { freePort }

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
// plain JavaScript, so the compiled service runs without tsx's loader, as under `npm start`
const DIE_WITH_PARENT = join(ROOT, 'bench', 'lib', 'die-with-parent.mjs')
/** what `npm start` runs after its prestart build */
export const SERVER_ENTRY = join(ROOT, 'dist', 'src', 'server.js')
const TSX = import.meta.resolve('tsx')
export const API_KEY = 'bench-api-key-0123456789abcdef'

const live = new Set<ChildProcess>()
const tempDirs = new Set<string>()

function killAll (): void {
  for (const child of live) {
    try { child.kill('SIGKILL') } catch { /* already gone */ }
  }
  live.clear()
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
  tempDirs.clear()
}
process.on('exit', killAll)
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => { killAll(); process.exit(130) })
}

/** Kill `child` too when the driver exits. */
export function track (child: ChildProcess): ChildProcess {
  live.add(child)
  child.once('exit', () => { live.delete(child) })
  return child
}

/** A temporary folder removed when the driver exits (or by `rm`). */
export function tempDir (prefix: string): { path: string, rm: () => void, keep: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix))
  tempDirs.add(path)
  return {
    path,
    rm: () => { rmSync(path, { recursive: true, force: true }); tempDirs.delete(path) },
    keep: () => { tempDirs.delete(path) }
  }
}

export interface Proc {
  readonly child: ChildProcess
  readonly pid: number
  readonly logFile: string
  /** resolves with the exit code (null when killed by a signal) */
  readonly exited: Promise<number | null>
  /** SIGTERM, then SIGKILL after `graceMs` */
  stop: (graceMs?: number) => Promise<number | null>
  /** last lines of its output, for error messages */
  tail: (lines?: number) => string
}

export interface SpawnOptions {
  env: Record<string, string>
  logFile: string
  /** extra node flags, e.g. --cpu-prof */
  nodeFlags?: string[]
  onStdoutLine?: (line: string) => void
  /** working directory (default the repository) */
  cwd?: string
}

const isTs = (file: string): boolean => /\.[cm]?ts$/.test(file)

/**
 * `node [flags] <script>` with the driver's death watch preloaded; tsx's loader (`--import tsx`) only
 * when the script is TypeScript (the emulator, the bare-Fastify baseline), so the compiled service runs
 * exactly as under `npm start`.
 */
export function spawnNode (script: string, opts: SpawnOptions): Proc {
  mkdirSync(dirname(opts.logFile), { recursive: true })
  const log = createWriteStream(opts.logFile)
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  const loader = isTs(script) ? ['--import', TSX] : []
  const child = spawn(process.execPath, [...(opts.nodeFlags ?? []), ...loader, '--import', DIE_WITH_PARENT, script], {
    cwd: opts.cwd ?? ROOT,
    env: { ...env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.json'), ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  if (child.pid === undefined) throw new Error(`could not spawn ${script}`)
  live.add(child)
  let pending = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    log.write(chunk)
    if (opts.onStdoutLine === undefined) return
    pending += chunk.toString('utf8')
    let nl: number
    while ((nl = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, nl)
      pending = pending.slice(nl + 1)
      opts.onStdoutLine(line)
    }
  })
  child.stderr?.on('data', (chunk: Buffer) => { log.write(chunk) })
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => { live.delete(child); log.end(); resolve(code) })
  })
  return {
    child,
    pid: child.pid,
    logFile: opts.logFile,
    exited,
    async stop (graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill('SIGTERM')
      const timer = setTimeout(() => { child.kill('SIGKILL') }, graceMs)
      const code = await exited
      clearTimeout(timer)
      return code
    },
    tail (lines = 20) {
      try { return readFileSync(opts.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') } catch { return '' }
    }
  }
}

export interface EmulatorProc extends Proc {
  wsUrl: string
  controlUrl: string
  rootPublicKey: string
  caFile: string
}

/** test/.certs/{cert,key}.pem, made by emulator/src/make-cert.ts when missing. */
export function ensureCert (): { certDir: string, caFile: string } {
  const certDir = join(ROOT, 'test', '.certs')
  const caFile = join(certDir, 'cert.pem')
  if (!existsSync(caFile) || !existsSync(join(certDir, 'key.pem'))) {
    const made = spawnSync(process.execPath, ['--import', TSX, join(ROOT, 'emulator', 'src', 'make-cert.ts'), certDir], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 })
    if (made.status !== 0) throw new Error(`could not make the emulator certificate: ${made.stderr}`)
  }
  return { certDir, caFile }
}

/**
 * dist/ as `npm start`'s prestart leaves it: built now when missing or older than the sources (the
 * build script's lock serialises drivers started side by side). Fast when up to date.
 */
export function ensureBuilt (): void {
  const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 })
  if (built.status !== 0) throw new Error(`could not build the service (npm run build):\n${built.stderr}`)
}

/** Everything the service needs to know about the emulator, fixed before either process starts. */
export interface EmulatorPlan {
  port: number
  wsUrl: string
  controlUrl: string
  /** base64: 32 bytes private, 32 bytes public */
  root: string
  rootPublicKey: string
  certDir: string
  caFile: string
}

/**
 * The emulator's port and root key, and its TLS certificate: the suite's own (test/.certs, made by
 * `npm test`'s pretest, or here by the same script when missing), so NODE_EXTRA_CA_CERTS can name it
 * before the service starts.
 */
export async function planEmulator (): Promise<EmulatorPlan> {
  const { certDir, caFile } = ensureCert()
  const { publicKey, privateKey } = generateKeyPairSync('x25519', {
    publicKeyEncoding: { format: 'der', type: 'spki' },
    privateKeyEncoding: { format: 'der', type: 'pkcs8' }
  })
  const pub = publicKey.subarray(-32)
  const port = await freePort()
  return {
    port,
    wsUrl: `ws://127.0.0.1:${port}/ws/chat`,
    controlUrl: `http://127.0.0.1:${port}`,
    root: Buffer.concat([privateKey.subarray(-32), pub]).toString('base64'),
    rootPublicKey: pub.toString('base64'),
    certDir,
    caFile
  }
}

/** The emulator (bench/lib/emulator-main.ts) as its own process; resolves once it announced itself. */
export async function startEmulatorProcess (dir: string, plan: EmulatorPlan, opts: { nodeFlags?: string[], name?: string } = {}): Promise<EmulatorProc> {
  let onLine: (line: string) => void = () => undefined
  const announced = new Promise<{ wsUrl: string, controlUrl: string, rootPublicKey: string, caFile: string }>((resolve) => {
    onLine = (line) => { if (line.startsWith('{')) resolve(JSON.parse(line)) }
  })
  const proc = spawnNode(join(ROOT, 'bench', 'lib', 'emulator-main.ts'), {
    env: { EMULATOR_PORT: String(plan.port), EMULATOR_ROOT: plan.root, EMULATOR_CERT_DIR: plan.certDir },
    logFile: join(dir, `${opts.name ?? 'emulator'}.log`),
    onStdoutLine: (line) => { onLine(line) },
    ...(opts.nodeFlags !== undefined ? { nodeFlags: opts.nodeFlags } : {})
  })
  const info = await Promise.race([
    announced,
    proc.exited.then((code) => { throw new Error(`emulator exited (${code}) before it was ready:\n${proc.tail()}`) }),
    sleep(30_000).then(() => { throw new Error(`emulator not ready after 30 s:\n${proc.tail()}`) })
  ])
  if (info.wsUrl !== plan.wsUrl || info.rootPublicKey !== plan.rootPublicKey) throw new Error(`the emulator did not take the planned port and root: ${JSON.stringify(info)}`)
  return Object.assign(proc, info)
}

export interface ServiceProc extends Proc {
  base: string
  port: number
  dataDir: string
  /** ms from spawn until /api/health answered */
  readyMs: number
  spawnedAt: number
}

export interface ServiceOptions {
  dir: string
  emulator: { wsUrl: string, rootPublicKey: string, caFile: string }
  env?: Record<string, string>
  nodeFlags?: string[]
  name?: string
}

/**
 * `node dist/src/server.js` (what `npm start` runs, built first when stale) with the benchmark's
 * settings; resolves once /api/health answers.
 */
export async function startService (opts: ServiceOptions): Promise<ServiceProc> {
  ensureBuilt()
  const port = await freePort()
  const dataDir = join(opts.dir, 'data')
  const spawnedAt = performance.now()
  // BENCH_SERVICE_FLAGS: node flags for the service only (e.g. `--max-semi-space-size=32`), to measure a setting
  const extraFlags = (process.env.BENCH_SERVICE_FLAGS ?? '').split(/\s+/).filter((f) => f !== '')
  const nodeFlags = [...extraFlags, ...(opts.nodeFlags ?? [])]
  const proc = spawnNode(SERVER_ENTRY, {
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      API_KEY,
      DATA_DIR: dataDir,
      UPLOAD_DIR: join(opts.dir, 'uploads'),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '10000000',
      WA_WEBSOCKET_URL: opts.emulator.wsUrl,
      WA_TEST_TRUST_ROOT: opts.emulator.rootPublicKey,
      NODE_EXTRA_CA_CERTS: opts.emulator.caFile,
      ...opts.env
    },
    logFile: join(opts.dir, `${opts.name ?? 'service'}.log`),
    // run from the temp folder: a developer's .env in the repository must not change the benchmark
    cwd: opts.dir,
    ...(nodeFlags.length > 0 ? { nodeFlags } : {})
  })
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`service exited (${proc.child.exitCode}) during start:\n${proc.tail()}`)
    try {
      const res = await fetch(`${base}/api/health`, { headers: { 'x-api-key': API_KEY } })
      if (res.ok) break
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      await proc.stop(1000)
      throw new Error(`service not ready after 30 s:\n${proc.tail()}`)
    }
    await sleep(20)
  }
  return Object.assign(proc, { base, port, dataDir, readyMs: performance.now() - spawnedAt, spawnedAt })
}

export const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** Resident set size of a process in bytes, from /proc/<pid>/status (VmRSS). */
export function rssOf (pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (m === null) throw new Error(`no VmRSS for ${pid}`)
  return Number(m[1]) * 1024
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat (USER_HZ = 100). */
export function cpuSeconds (pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // fields after the parenthesised command name; utime and stime are fields 14 and 15
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** Median of `count` RSS samples `everyMs` apart. */
export async function settledRss (pid: number, count = 5, everyMs = 1000): Promise<{ median: number, samples: number[] }> {
  const samples: number[] = []
  for (let i = 0; i < count; i++) {
    if (i > 0) await sleep(everyMs)
    samples.push(rssOf(pid))
  }
  const sorted = [...samples].sort((a, b) => a - b)
  return { median: sorted[Math.floor(sorted.length / 2)], samples }
}

/**
 * Asks a process started with `--heapsnapshot-signal=SIGWINCH --diagnostic-dir=<dir>` for a heap snapshot
 * and resolves with its file once written (its size stopped growing and the process answers again).
 */
export async function heapSnapshot (pid: number, dir: string, timeoutMs = 120_000): Promise<string> {
  const before = new Set(readdirSync(dir))
  process.kill(pid, 'SIGWINCH')
  const deadline = Date.now() + timeoutMs
  let last = -1
  for (;;) {
    await sleep(500)
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f))
    if (file !== undefined) {
      const size = statSync(join(dir, file)).size
      if (size > 0 && size === last) return join(dir, file)
      last = size
    }
    if (Date.now() > deadline) throw new Error(`no heap snapshot from ${pid} after ${timeoutMs} ms`)
  }
}
