import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, test, type TestContext } from 'node:test'
import { openDatabase, openPostgres, type DbHandle } from '../../src/db/connection.js'
import { startPostgres, type PrivatePostgres } from './postgres.js'
import { tempDir } from './processes.js'

// Storage tests run against both dialects: `dialectTest(name, fn)` defines `name [sqlite]` and
// `name [postgres]`. Each test gets a fresh database: a temporary SQLite file, or a new database on one
// private PostgreSQL server per test file (started on first use, stopped after the file's tests). When
// the PostgreSQL binaries are missing the [postgres] tests fail with the reason; they never skip.

export type Dialect = DbHandle['dialect']
export const DIALECTS: Dialect[] = ['sqlite', 'postgres']

let server: Promise<PrivatePostgres> | undefined
let migrated: Promise<string> | undefined
let migratedSqlite: Promise<string> | undefined
let stopRegistered = false

/**
 * Call at the top level of a test file that uses PostgreSQL (dialectTest does): registers the stop of the
 * file's server after all its tests (node:test's `after` belongs to the file only when called at load).
 */
export function usePostgres (): void {
  if (stopRegistered) return
  stopRegistered = true
  after(async () => { if (server !== undefined) await (await server).stop() })
}

/** The file's private PostgreSQL server (started once). */
export async function sharedPostgres (): Promise<PrivatePostgres> {
  if (!stopRegistered) throw new Error('call usePostgres() at the top level of the test file')
  server ??= startPostgres()
  return await server
}

/** A fresh, migrated database of the dialect; closed (and removed) after the test. */
export async function openTestDb (t: TestContext, dialect: Dialect): Promise<DbHandle> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'st-db-'))
    await seedMigratedSqlite(join(dir, 'test.db'))
    const handle = await openDatabase(join(dir, 'test.db'))
    t.after(async () => { await handle.close(); rmSync(dir, { recursive: true, force: true }) })
    return handle
  }
  const handle = await openPostgres(await postgresUrl())
  t.after(async () => { await handle.close() })
  return handle
}

/**
 * A fresh, migrated database on the shared server (for a service started with DATABASE_URL): a copy of one
 * the file's first call migrated. A copy and a service's check that nothing is left to migrate take
 * under half of migrating an empty database (95 against 217 ms each, CPU of the server and the test together,
 * on this project's machines), and the suite makes some seventy.
 */
export async function postgresUrl (): Promise<string> {
  const pg = await sharedPostgres()
  migrated ??= (async () => {
    const url = await pg.createDatabase('t_migrated')
    // closed before any copy: PostgreSQL copies a template only while nobody is connected to it
    await (await openPostgres(url, { max: 1 })).close()
    return 't_migrated'
  })()
  return await pg.createDatabase(undefined, { template: await migrated })
}

/**
 * Puts a migrated SQLite database at `file` (absent), as the service's own migrations would leave it: a copy of
 * one this process migrated once, closed first (so its write-ahead log is folded into the file). Opening the copy
 * finds nothing to migrate: 8-10 ms of CPU against 42-57 ms for an empty file and its migrations, and the suite
 * opens some hundreds. The folder is made as the service makes it (0700) and the file gets the service's 0600.
 */
export async function seedMigratedSqlite (file: string): Promise<void> {
  migratedSqlite ??= (async () => {
    const template = join(tempDir('st-sqlite-template-').path, 'migrated.db')
    await (await openDatabase(template)).close()
    return template
  })()
  const template = await migratedSqlite
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  if (existsSync(file)) return
  copyFileSync(template, file)
  chmodSync(file, 0o600)
}

export function dialectTest (name: string, fn: (t: TestContext, dialect: Dialect) => Promise<void>): void {
  usePostgres()
  for (const dialect of DIALECTS) test(`${name} [${dialect}]`, async (t) => { await fn(t, dialect) })
}

/** The settings that put a service built by a test on the dialect: none for SQLite, DATABASE_URL for PostgreSQL. */
export async function dialectEnv (dialect: Dialect): Promise<Record<string, string>> {
  return dialect === 'sqlite' ? {} : { DATABASE_URL: await postgresUrl() }
}
