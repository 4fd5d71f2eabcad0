import type SQLite from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database, ViewerRow } from '../database.js'

type Db = Kysely<Database>

/** Viewers of one status, first view first. */
export async function listViewers (db: Db, statusId: number): Promise<ViewerRow[]> {
  return await db.selectFrom('viewers')
    .selectAll()
    .where('status_id', '=', statusId)
    .orderBy('viewed_at')
    .orderBy('number')
    .execute()
}

export interface ViewToRecord {
  sessionId: string
  /** platform message id of the status */
  messageId: string
  number: string
  jid: string
  viewedAt: number
  isReal: boolean
}

export interface RecordedViews {
  /** statuses whose viewer list changed, with their session */
  changed: Map<number, string>
  /** views whose message id matches no status of that session */
  unmatched: number
}

/**
 * The hot path of viewer ingest: prepared statements on the raw connection, one transaction per batch.
 * One row per (status, number); a later receipt only moves `viewed_at` earlier, so the first view time
 * wins whatever order receipts arrive in.
 */
export function viewerWriter (sqlite: SQLite.Database) {
  const statusIdOf = sqlite.prepare<[string, string], number>('select id from statuses where session_id = ? and message_id = ?').pluck()
  const upsert = sqlite.prepare<[number, string, string, number, number]>(
    'insert into viewers (status_id, number, jid, viewed_at, is_real) values (?, ?, ?, ?, ?) ' +
    'on conflict (status_id, number) do update set viewed_at = excluded.viewed_at where excluded.viewed_at < viewers.viewed_at'
  )

  const record = sqlite.transaction((views: ViewToRecord[]): RecordedViews => {
    const changed = new Map<number, string>()
    const ids = new Map<string, number | undefined>()
    let unmatched = 0
    for (const v of views) {
      const key = `${v.sessionId}\u0000${v.messageId}`
      let statusId = ids.get(key)
      if (!ids.has(key)) {
        statusId = statusIdOf.get(v.sessionId, v.messageId)
        ids.set(key, statusId)
      }
      if (statusId === undefined) { unmatched++; continue }
      if (upsert.run(statusId, v.number, v.jid, v.viewedAt, v.isReal ? 1 : 0).changes > 0) changed.set(statusId, v.sessionId)
    }
    return { changed, unmatched }
  })

  return {
    record
  }
}
