/**
 * Child processes of a test or a benchmark (the service, the emulator, helper servers), each its own Node
 * process on 127.0.0.1. Every child is tracked and killed, and every temporary folder removed, when the
 * driver exits, whatever the reason (the exit handlers are installed by the first child or folder, so
 * merely importing this module changes nothing).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
// plain JavaScript, so the compiled service runs without tsx's loader, as under `npm start`
export const DIE_WITH_PARENT = join(ROOT, 'test', 'support', 'die-with-parent.mjs')
const TSX = import.meta.resolve('tsx')

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
let installed = false
function cleanUpOnExit (): void {
  if (installed) return
  installed = true
  process.on('exit', killAll)
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => { killAll(); process.exit(130) })
  }
}

/** Kill `child` too when the driver exits. */
export function track (child: ChildProcess): ChildProcess {
  cleanUpOnExit()
  live.add(child)
  child.once('exit', () => { live.delete(child) })
  return child
}

/** A temporary folder removed when the driver exits (or by `rm`). */
export function tempDir (prefix: string): { path: string, rm: () => void, keep: () => void } {
  cleanUpOnExit()
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
  onStderrLine?: (line: string) => void
  /** working directory (default the repository); made when missing */
  cwd?: string
  /** the environment the child starts from (default this process's) */
  inherit?: Record<string, string>
}

const isTs = (file: string): boolean => /\.[cm]?ts$/.test(file)

/**
 * This test process runs its compiled copy (`npm test` runs .test-build/, see scripts/test-build.mjs): a
 * TypeScript child of the repository then runs from its compiled copy too, without tsx's loader (the same
 * code, 1-2 CPU s less per process on Node 20; its coverage maps back to the .ts file the same way).
 */
export const RUNS_COMPILED = (process.argv[1] ?? '').split(sep).includes('.test-build')

/** `[script, loader flags]`: a .ts file under tsx, or its compiled copy with none when this process runs compiled */
function runnable (script: string): [string, string[]] {
  if (!isTs(script)) return [script, []]
  const rel = relative(ROOT, resolve(script))
  const compiled = join(ROOT, '.test-build', rel.replace(/\.[cm]?ts$/, '.js'))
  if (RUNS_COMPILED && !rel.startsWith('..') && existsSync(compiled)) return [compiled, ['--enable-source-maps']]
  return [script, ['--import', TSX]]
}

/** Node's arguments to run `script` (a file of the repository, relative to it or absolute) the way `runnable` says. */
export function nodeArgs (script: string): string[] {
  const [entry, loader] = runnable(resolve(ROOT, script))
  return [...loader, entry]
}

/** A chunk handler that calls `onLine` once per complete line. */
function byLine (onLine: (line: string) => void): (chunk: Buffer) => void {
  let pending = ''
  return (chunk) => {
    pending += chunk.toString('utf8')
    let nl: number
    while ((nl = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, nl)
      pending = pending.slice(nl + 1)
      onLine(line)
    }
  }
}

/** This process's environment as plain strings. */
export function currentEnv (): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  return env
}

/**
 * What each open descriptor of process `pid` points at (Linux: `/proc/<pid>/fd`), e.g. `socket:[123]`; null
 * for one closed between listing and reading. Throws when the process is gone (or there is no /proc).
 */
export function descriptorLinks (pid: number): Array<string | null> {
  const dir = `/proc/${pid}/fd`
  return readdirSync(dir).map((fd) => { try { return readlinkSync(join(dir, fd)) } catch { return null } })
}

/**
 * `node [flags] <script>` with the driver's death watch preloaded; tsx's loader (`--import tsx`) only
 * when the script is TypeScript and has no compiled copy to run (`runnable`), so the built service runs
 * exactly as under `npm start`. Its output
 * goes to `logFile` (appended: a restart keeps the earlier run's lines).
 */
export function spawnNode (script: string, opts: SpawnOptions): Proc {
  mkdirSync(dirname(opts.logFile), { recursive: true })
  if (opts.cwd !== undefined) mkdirSync(opts.cwd, { recursive: true })
  const log = createWriteStream(opts.logFile, { flags: 'a' })
  const [entry, loader] = runnable(script)
  const child = spawn(process.execPath, [...(opts.nodeFlags ?? []), ...loader, '--import', DIE_WITH_PARENT, entry], {
    cwd: opts.cwd ?? ROOT,
    env: { ...(opts.inherit ?? currentEnv()), TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.json'), ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  if (child.pid === undefined) {
    child.once('error', () => undefined) // reported by the throw below
    throw new Error(`could not spawn ${script}`)
  }
  cleanUpOnExit()
  live.add(child)
  child.stdout?.on('data', (chunk: Buffer) => { log.write(chunk) })
  child.stderr?.on('data', (chunk: Buffer) => { log.write(chunk) })
  if (opts.onStdoutLine !== undefined) child.stdout?.on('data', byLine(opts.onStdoutLine))
  if (opts.onStderrLine !== undefined) child.stderr?.on('data', byLine(opts.onStderrLine))
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

let builtChecked = false

/**
 * dist/ as `npm start`'s prestart leaves it: built now when missing or older than the sources (the
 * build script's lock serialises drivers started side by side). Checked once a process: a test process
 * spawns the service up to a dozen times, each check was a node process of its own walking the sources,
 * and nothing rebuilds the sources while the suite runs. `again`: check once more (a benchmark that holds
 * its linked sessions and starts the service again after an edit, bench/scale-start.ts).
 */
export function ensureBuilt (opts: { again?: boolean } = {}): void {
  if (builtChecked && opts.again !== true) return
  const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs'), '--if-stale'], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 })
  if (built.status !== 0) throw new Error(`could not build the service (npm run build):\n${built.stderr}`)
  builtChecked = true
}
