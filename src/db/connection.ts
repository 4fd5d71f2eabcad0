import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import type SQLiteTypes from 'better-sqlite3'
import { Kysely, Migrator, SqliteDialect } from 'kysely'
import type { Database } from './database.js'
import { migrationProvider } from './migrations/index.js'
import { SQLite } from './sqlite.js'

export interface DbHandle {
  db: Kysely<Database>
  /** the raw better-sqlite3 connection, for hot paths that want prepared statements */
  sqlite: SQLiteTypes.Database
  file: string
  close: () => Promise<void>
}

export async function openDatabase (file: string): Promise<DbHandle> {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('foreign_keys = ON')
  sqlite.pragma('busy_timeout = 5000')
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) })
  const { error, results } = await new Migrator({ db, provider: migrationProvider }).migrateToLatest()
  const failed = results?.find((r) => r.status === 'Error')
  if (error !== undefined || failed !== undefined) {
    await db.destroy()
    const reason = error instanceof Error ? error.message : String(error ?? failed?.migrationName)
    throw new Error(`Database migration failed: ${reason}`)
  }
  return { db, sqlite, file, close: async () => { await db.destroy() } }
}
