import { Kysely, PostgresDialect } from 'kysely'
import type pg from 'pg'
import type { Database } from '../database.js'
import { migrate } from '../migrate.js'

/** PostgreSQL (`DATABASE_URL`): Kysely over a `pg` pool; the hot paths use the pool directly. */
export interface PostgresHandle {
  dialect: 'postgres'
  db: Kysely<Database>
  pool: pg.Pool
  /** the server's URL (the cluster's lease renewals open connections of their own to it) */
  url: string
  close: () => Promise<void>
}

// Every integer column is `bigint` on PostgreSQL (times are milliseconds since the epoch); int8 and
// count()'s results come back as JS numbers, not strings (all values stay far below 2^53). numeric (sum of
// bigint) stays a string: the few sums are wrapped in Number() already.
const INT8_OID = 20

// `pg` is loaded by the first openPostgres, not when this module is: a SQLite deployment (the default) never
// needs it, and it cost ~0.1 CPU s of every start (measured alone on this project's machines, session 19).
let driver: { pg: typeof pg, types: { getTypeParser: typeof pg.types.getTypeParser } } | null = null

async function loadDriver (): Promise<NonNullable<typeof driver>> {
  if (driver !== null) return driver
  const { default: loaded } = await import('pg')
  const getTypeParser = ((oid: number, format?: 'text' | 'binary') => oid === INT8_OID && format !== 'binary'
    ? (value: string) => Number(value)
    : loaded.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser
  driver = { pg: loaded, types: { getTypeParser } }
  return driver
}

export async function openPostgres (url: string, opts: { max?: number } = {}): Promise<PostgresHandle> {
  const { pg, types } = await loadDriver()
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
  // renewals belong to a node whose stores openPostgres opened, so the driver is loaded by now
  const { pg, types } = driver as NonNullable<typeof driver>
  const pool = new pg.Pool({ connectionString: url, max: 2, types, application_name: `status-tracker-leases-${opts.nodeId}`, query_timeout: opts.timeoutMs, connectionTimeoutMillis: opts.timeoutMs })
  pool.on('error', opts.onError)
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  return { db, close: async () => { await db.destroy() } }
}
