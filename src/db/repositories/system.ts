import type SQLite from 'better-sqlite3'
import type { DbHandle } from '../connection.js'

// The database's change stamp, for the sent-statuses cache (the sent-statuses-bytes speed trick). The
// other database-wide reads moved to the system store (src/db/stores/system.ts).

/**
 * A stamp that moves on every write to the database, by this connection (total_changes) or another
 * (data_version): equal stamps mean nothing changed in between.
 */
export function changeStamp (sqlite: SQLite.Database): () => string {
  const changes = sqlite.prepare<[], { c: number, v: number }>('select total_changes() as c, data_version as v from pragma_data_version')
  return () => { const { c, v } = changes.get()!; return `${c}:${v}` }
}

/**
 * The dialect's change stamp. PostgreSQL has no cheap database-wide change counter, and other nodes write
 * too: every call there gives a new stamp, so nothing is served from a cache (each read is a query).
 */
export function changeStampFor (handle: DbHandle): () => string {
  if (handle.dialect === 'sqlite') return changeStamp(handle.sqlite)
  let n = 0
  return () => `pg:${++n}`
}
