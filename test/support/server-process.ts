import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

// Shared by the private PostgreSQL and Redis servers the tests start: a temporary folder (owned by the
// user the server runs as), the child process, and a clean-up that also runs when the test process exits
// abruptly (the runner's --test-force-exit), so no server or folder outlives the test.

/** The user a server binary runs as: `postgres` when the tests run as root (initdb refuses root), else us. */
export interface RunAs { uid: number, gid: number }

export function serverUser (name = 'postgres'): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string): number => {
    const out = spawnSync('id', [flag, name], { encoding: 'utf8' })
    const n = Number(out.stdout.trim())
    if (out.status !== 0 || !Number.isInteger(n)) throw new Error(`running as root, but the system user "${name}" is missing (it comes with the Debian package): ${out.stderr}`)
    return n
  }
  return { uid: id('-u'), gid: id('-g') }
}

export function tempFolder (prefix: string, owner?: RunAs): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid)
  return dir
}

const running = new Set<{ child: ChildProcess, dir: string }>()
process.once('exit', () => {
  for (const r of running) {
    try { r.child.kill('SIGKILL') } catch { /* already gone */ }
    rmSync(r.dir, { recursive: true, force: true })
  }
})

export interface ServerProcess {
  child: ChildProcess
  /** the server's output so far (for error messages) */
  output: () => string
  /** signal, wait for the exit (bounded), then remove the folder unless `keepFolder` */
  stop: (signal?: NodeJS.Signals, keepFolder?: boolean) => Promise<void>
}

export function startProcess (file: string, args: string[], dir: string, runAs?: RunAs, opts: SpawnOptions = {}): ServerProcess {
  let output = ''
  const child = spawn(file, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], ...(runAs ?? {}), ...opts })
  const keep = (b: Buffer): void => { output = (output + b.toString()).slice(-8000) }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const entry = { child, dir }
  running.add(entry)
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => { resolve() })
  })
  child.once('error', (err) => { output += `\n${err.message}` })
  return {
    child,
    output: () => output,
    stop: async (signal = 'SIGTERM', keepFolder = false) => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal)
        const timer = setTimeout(() => { child.kill('SIGKILL') }, 10_000)
        await exited
        clearTimeout(timer)
      }
      running.delete(entry)
      if (!keepFolder) rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** Runs a command to its end; throws with its output when it fails. */
export function runToEnd (file: string, args: string[], cwd: string, runAs?: RunAs): void {
  const out = spawnSync(file, args, { cwd, encoding: 'utf8', ...(runAs ?? {}) })
  if (out.status !== 0) throw new Error(`${file} ${args.join(' ')} failed (${out.error?.message ?? `exit ${out.status}`}):\n${out.stdout}\n${out.stderr}`)
}

/** A binary from a Debian package, or a clear error naming the package (never a silent skip). */
export function requireBinary (path: string, pkg: string): string {
  if (!existsSync(path)) throw new Error(`${path} not found: install the Debian package "${pkg}" (.ci/run does)`)
  return path
}

/** The newest /usr/lib/postgresql/<version>/bin (PG_BIN overrides), preferring 15. */
export function postgresBinDir (): string {
  if (process.env.PG_BIN !== undefined && process.env.PG_BIN !== '') return process.env.PG_BIN
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : []
  if (versions.length === 0) throw new Error(`no PostgreSQL server binaries under ${root}: install the Debian package "postgresql" (.ci/run does)`)
  const pick = versions.includes('15') ? '15' : versions.sort((a, b) => Number(b) - Number(a))[0]
  return join(root, pick, 'bin')
}
