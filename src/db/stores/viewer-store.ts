import type { DbHandle } from '../connection.js'
import { createInteractions } from './interactions.js'
import { sqliteReceipts, type ViewerStore } from './viewers.js'
import { createPostgresReceipts } from './viewers-pg.js'

// The viewer store put together: the receipt path of the dialect (viewers.ts: the port and SQLite's,
// viewers-pg.ts: PostgreSQL's) and the reactions and replies both dialects share (interactions.ts). Its own
// file so that those import the port and none of them imports its importer.

export function createViewerStore (handle: DbHandle): ViewerStore {
  const receipts = handle.dialect === 'sqlite' ? sqliteReceipts(handle.db, handle.sqlite) : createPostgresReceipts(handle.db, handle.pool)
  return { ...receipts, ...createInteractions(handle.db) }
}
