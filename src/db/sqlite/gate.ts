import type SQLiteTypes from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database } from '../database.js'

/**
 * Runs synchronous better-sqlite3 work on SQLite's one connection while holding Kysely's connection lock:
 * a Kysely transaction another caller has open is finished first, so the work never joins (or reads the
 * uncommitted rows of) somebody else's transaction. `work` is synchronous: wrap several statements in
 * `sqlite.transaction(...)` to commit them together. Used by stores only, and only where a prepared
 * statement earns its place (the comment at the call names the `npm run bench` figure).
 */
export async function onSqliteConnection<T> (db: Kysely<Database>, sqlite: SQLiteTypes.Database, work: (sqlite: SQLiteTypes.Database) => T): Promise<T> {
  return await db.connection().execute(async () => work(sqlite))
}
