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

/**
 * The hot path of viewer ingest: prepared statements on the raw connection. One row per (status, viewer)
 * where the viewer is the number, or the LID while its number is unknown; a later receipt only moves
 * `viewed_at` earlier, so the first view time wins whatever the order.
 */
export function viewerWriter (sqlite: SQLite.Database) {
  // one statement per view: finds the status and upserts; returns the status id when a row changed
  const upsertView = sqlite.prepare<[string, string | null, string, number, number, string, string], number>(
    'insert into viewers (status_id, viewer, number, jid, viewed_at, is_real) ' +
    'select id, ?, ?, ?, ?, ? from statuses where session_id = ? and message_id = ? ' +
    'on conflict (status_id, viewer) do update set viewed_at = excluded.viewed_at where excluded.viewed_at < viewers.viewed_at ' +
    'returning status_id'
  ).pluck()
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

  const one = (v: ViewToRecord, changed: Map<number, string>): void => {
    // all(), not get(): only a statement stepped to its end runs SQLite's WAL hook, i.e. the automatic
    // checkpoint; get() leaves the commit to the reset, and the WAL would grow without bound
    for (const statusId of upsertView.all(v.number ?? v.jid, v.number, v.jid, v.viewedAt, v.isReal ? 1 : 0, v.sessionId, v.messageId)) {
      changed.set(statusId, v.sessionId)
    }
  }
  const many = sqlite.transaction((views: ViewToRecord[], changed: Map<number, string>): void => {
    for (const v of views) one(v, changed)
  })

  /**
   * Commits the views in one transaction (a single view is a single autocommit statement, the cheapest
   * transaction there is). Views of statuses that do not exist are skipped. Returns the statuses whose
   * viewer list changed, with their session.
   */
  function record (views: ViewToRecord[]): Map<number, string> {
    const changed = new Map<number, string>()
    if (views.length === 1) one(views[0], changed)
    else if (views.length > 1) many(views, changed)
    return changed
  }

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
