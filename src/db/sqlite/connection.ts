import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type SQLiteTypes from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import type { Database } from '../database.js'
import { migrate } from '../migrate.js'
import { SQLite } from './driver.js'
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

/** `plainStatements`: the kept-statements speed trick off (src/speed-tricks.ts) */
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
