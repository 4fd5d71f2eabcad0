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
    .orderBy('viewer')
    .execute()
}

export interface ViewToRecord {
  sessionId: string
  /** platform message id of the status */
  messageId: string
  /** digits; null when the viewer is a LID without a known number */
  number: string | null
  /** `<number>@s.whatsapp.net`, or the LID when `number` is null */
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
 * The hot path of viewer ingest: prepared statements on the raw connection, one transaction per call.
 * One row per (status, viewer) where the viewer is the number, or the LID while its number is unknown;
 * a later receipt only moves `viewed_at` earlier, so the first view time wins whatever the order.
 */
export function viewerWriter (sqlite: SQLite.Database) {
  const statusIdOf = sqlite.prepare<[string, string], number>('select id from statuses where session_id = ? and message_id = ?').pluck()
  const upsert = sqlite.prepare<[number, string, string | null, string, number, number]>(
    'insert into viewers (status_id, viewer, number, jid, viewed_at, is_real) values (?, ?, ?, ?, ?, ?) ' +
    'on conflict (status_id, viewer) do update set viewed_at = excluded.viewed_at where excluded.viewed_at < viewers.viewed_at'
  )
  const lidRows = sqlite.prepare<[string, string], { status_id: number, viewed_at: number, is_real: number }>(
    'select v.status_id, v.viewed_at, v.is_real from viewers v join statuses s on s.id = v.status_id ' +
    'where v.viewer = ? and v.number is null and s.session_id = ?'
  )
  const removeLidRow = sqlite.prepare<[number, string]>('delete from viewers where status_id = ? and viewer = ?')
  const unmapped = sqlite.prepare<[string, number], string>(
    'select distinct v.viewer from viewers v join statuses s on s.id = v.status_id where v.number is null and s.session_id = ? limit ?'
  ).pluck()

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
      if (upsert.run(statusId, v.number ?? v.jid, v.number, v.jid, v.viewedAt, v.isReal ? 1 : 0).changes > 0) changed.set(statusId, v.sessionId)
    }
    return { changed, unmatched }
  })

  /**
   * Views stored under a LID get its number: each row moves to the number's key, merged with a row the
   * number already has there (the earlier view time wins). Returns the statuses whose viewers changed.
   */
  const mapLids = sqlite.transaction((sessionId: string, mappings: Array<{ lid: string, number: string }>): Set<number> => {
    const changed = new Set<number>()
    for (const { lid, number } of mappings) {
      for (const row of lidRows.all(lid, sessionId)) {
        removeLidRow.run(row.status_id, lid)
        upsert.run(row.status_id, number, number, `${number}@s.whatsapp.net`, row.viewed_at, row.is_real)
        changed.add(row.status_id)
      }
    }
    return changed
  })

  return {
    record,
    mapLids,
    /** LIDs of the session's views that have no number yet */
    unmappedLids: (sessionId: string, limit: number): string[] => unmapped.all(sessionId, limit)
  }
}
