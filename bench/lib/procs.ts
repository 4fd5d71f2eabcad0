/**
 * What only the benchmarks start: the emulator as its own process (the tests run it in process), and the
 * service through the kit's one spawner with the benchmark's settings. Process tracking, temporary folders
 * and the spawner itself are the test kit's (test/support/processes.ts, test/support/service.ts).
 */
import { generateKeyPairSync } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '../../test/support/ports.js'
import { ensureCert, ROOT, spawnNode, type Proc } from '../../test/support/processes.js'
import { spawnService, type ServiceOptions, type ServiceProc } from '../../test/support/service.js'
import { sleep } from '../../test/support/wait.js'

/**
 * How long a process of a benchmark may take to announce itself. 30 s; in smoke mode (BENCH_SMOKE=1, the
 * suite's test/bench/smoke*.test.ts, whose figures mean nothing) 90 s: there the scripts share the machine
 * with other test files, and a node of scale's cluster part once took over 30 s to write its first line.
 */
const READY_MS = process.env.BENCH_SMOKE === '1' ? 90_000 : 30_000

export type { ServiceOptions, ServiceProc }

export interface EmulatorProc extends Proc {
  wsUrl: string
  controlUrl: string
  rootPublicKey: string
  caFile: string
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
    sleep(READY_MS).then(() => { throw new Error(`emulator not ready after ${READY_MS / 1000} s:\n${proc.tail()}`) })
  ])
  if (info.wsUrl !== plan.wsUrl || info.rootPublicKey !== plan.rootPublicKey) throw new Error(`the emulator did not take the planned port and root: ${JSON.stringify(info)}`)
  return Object.assign(proc, info)
}

/**
 * The service as a benchmark runs it: spawnService (test/support/service.ts), so `node dist/src/server.js`
 * as `npm start` runs it, at LOG_LEVEL warn, dialling the planned emulator. BENCH_SERVICE_FLAGS: node flags
 * for the service only (e.g. `--max-semi-space-size=32`), to measure a setting.
 */
export async function startService (opts: ServiceOptions): Promise<ServiceProc> {
  const extraFlags = (process.env.BENCH_SERVICE_FLAGS ?? '').split(/\s+/).filter((f) => f !== '')
  return await spawnService({
    ...opts,
    env: { LOG_LEVEL: 'warn', ...opts.env },
    nodeFlags: [...extraFlags, ...(opts.nodeFlags ?? [])],
    readyTimeoutMs: READY_MS,
    readyPollMs: 20 // the start-up figures are timed to this poll
  })
}

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
