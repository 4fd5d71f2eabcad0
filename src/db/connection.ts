import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type SQLiteTypes from 'better-sqlite3'
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely'
import pg from 'pg'
import type { Database } from './database.js'
import { migrationProvider } from './migrations/index.js'
import { SQLite } from './sqlite.js'
import { cachedStatements } from './statement-cache.js'

/** The embedded default: one SQLite file, with the raw better-sqlite3 connection for synchronous hot paths. */
export interface SqliteHandle {
  dialect: 'sqlite'
  db: Kysely<Database>
  /** the raw better-sqlite3 connection, for hot paths that want prepared statements */
  sqlite: SQLiteTypes.Database
  file: string
  /** SPEED_TRICKS_OFF kept-statements: Kysely prepares each query again, the stores' own prepared lists are Kysely queries */
  plainStatements?: true
  close: () => Promise<void>
}

/** PostgreSQL (`DATABASE_URL`): Kysely over a `pg` pool; the hot paths use the pool directly. */
export interface PostgresHandle {
  dialect: 'postgres'
  db: Kysely<Database>
  pool: pg.Pool
  /** the server's URL (the cluster's lease renewals open connections of their own to it) */
  url: string
  close: () => Promise<void>
}

export type DbHandle = SqliteHandle | PostgresHandle

/** Where the data lives: a PostgreSQL URL when set, else the SQLite file. */
export interface DatabaseTarget { url: string | null, file: string }

/** `plainStatements`: the kept-statements speed trick off (src/speed-tricks.ts) */
export async function openStore (target: DatabaseTarget, opts: { plainStatements?: boolean } = {}): Promise<DbHandle> {
  return target.url === null ? await openDatabase(target.file, opts) : await openPostgres(target.url)
}

export async function openDatabase (file: string, opts: { plainStatements?: boolean } = {}): Promise<SqliteHandle> {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
  const plain = opts.plainStatements === true
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: plain ? sqlite : cachedStatements(sqlite) }) })
  await migrate(db)
  return { dialect: 'sqlite', db, sqlite, file, ...(plain ? { plainStatements: true as const } : {}), close: async () => { await db.destroy() } }
}

// Every integer column is `bigint` on PostgreSQL (times are milliseconds since the epoch); int8 and
// count()'s results come back as JS numbers, not strings (all values stay far below 2^53). numeric (sum of
// bigint) stays a string: the few sums are wrapped in Number() already.
const INT8_OID = 20
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => oid === INT8_OID && format !== 'binary'
    ? (value: string) => Number(value)
    : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser
}

/** Whether the value names a PostgreSQL server (postgres:// or postgresql://). */
export function isPostgresUrl (value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value)
}

export async function openPostgres (url: string, opts: { max?: number } = {}): Promise<PostgresHandle> {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 10, types, application_name: 'status-tracker' })
  // an idle client losing its server is reported here; without a listener it would crash the process
  pool.on('error', () => {})
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  try {
    await migrate(db)
  } catch (err) {
    await db.destroy().catch(() => {})
    throw err
  }
  return { dialect: 'postgres', db, pool, url, close: async () => { await db.destroy() } }
}

/**
 * A small pool of its own for the cluster's lease renewals, with client-side timeouts: a busy application
 * pool (a long send's writes) must not hold a renewal back, and a query that hangs fails so the next round
 * retries. No migrations: the application pool ran them.
 */
export function openLeaseDb (
  url: string, opts: { nodeId: string, timeoutMs: number, onError: (err: Error) => void }
): { db: Kysely<Database>, close: () => Promise<void> } {
  const pool = new pg.Pool({ connectionString: url, max: 2, types, application_name: `status-tracker-leases-${opts.nodeId}`, query_timeout: opts.timeoutMs, connectionTimeoutMillis: opts.timeoutMs })
  pool.on('error', opts.onError)
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  return { db, close: async () => { await db.destroy() } }
}

async function migrate (db: Kysely<Database>): Promise<void> {
  // numbers are handed out per branch (002 viewer LIDs, 003 sends, 004 webhooks) and merge in any order:
  // a database that already ran a later one still gets an earlier one that arrives after it.
  // On PostgreSQL the migrator takes an advisory lock: nodes starting together migrate one at a time.
  const { error, results } = await new Migrator({ db, provider: migrationProvider, allowUnorderedMigrations: true }).migrateToLatest()
  const failed = results?.find((r) => r.status === 'Error')
  if (error !== undefined || failed !== undefined) {
    await db.destroy()
    const reason = error instanceof Error ? error.message : String(error ?? failed?.migrationName)
    throw new Error(`Database migration failed: ${reason}`)
  }
}
