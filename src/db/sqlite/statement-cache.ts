import type SQLiteTypes from 'better-sqlite3'
import type { SqliteDatabase, SqliteStatement } from 'kysely'

/** Distinct SQL texts kept prepared; past it the least recently used is dropped (lists of varying length make new texts). */
const MAX_STATEMENTS = 500

/**
 * The SQLite connection as Kysely sees it, with its statements kept prepared by SQL text. Kysely's SQLite
 * driver calls `prepare(sql)` for every query it runs: SQLite parses and plans the text again each time,
 * which cost more than running it for the short queries every request makes (the session look-up, a
 * short sent-statuses list: bench/NOTES.md, issue 41). A statement still being iterated (Kysely's
 * `stream()`) is busy: the query then gets a fresh one. better-sqlite3 prepares a statement again by itself
 * when the schema changed under it (a migration), so a kept statement never runs against an old schema.
 */
export function cachedStatements (sqlite: SQLiteTypes.Database, max = MAX_STATEMENTS): SqliteDatabase {
  const kept = new Map<string, SQLiteTypes.Statement>()
  return {
    close: () => { kept.clear(); sqlite.close() },
    prepare (sql: string): SqliteStatement {
      const found = kept.get(sql)
      if (found !== undefined && !found.busy) {
        // most recently used last: the Map's first key is the one to drop
        kept.delete(sql)
        kept.set(sql, found)
        return found as unknown as SqliteStatement
      }
      const stmt = sqlite.prepare(sql)
      if (found === undefined) {
        kept.set(sql, stmt)
        if (kept.size > max) kept.delete(kept.keys().next().value as string)
      }
      return stmt as unknown as SqliteStatement
    }
  }
}
