import type SQLite from 'better-sqlite3'
import type { Kysely } from 'kysely'
import { pnJid } from '../../platform/jid.js'
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

/** A delivery receipt to record: the earliest per (status, recipient) is kept; own devices are not recorded. */
export interface DeliveryToRecord {
  sessionId: string
  messageId: string
  number: string | null
  jid: string
  deliveredAt: number
}

/** What one commit changed in one status: its new viewers (in commit order), if any. */
export interface StatusChange {
  sessionId: string
  messageId: string
  added: ViewToRecord[]
}

/**
 * The hot path of viewer ingest: prepared statements on the raw connection. One row per (status, viewer)
 * where the viewer is the number, or the LID while its number is unknown; a later receipt only moves
 * `viewed_at` earlier, so the first view time wins whatever the order.
 */
export function viewerWriter (sqlite: SQLite.Database) {
  // a new viewer: finds the status and inserts; returns the status id only when the row is new
  const insertView = sqlite.prepare<[string, string | null, string, number, number, string, string], number>(
    'insert into viewers (status_id, viewer, number, jid, viewed_at, is_real) ' +
    'select id, ?, ?, ?, ?, ? from statuses where session_id = ? and message_id = ? ' +
    'on conflict (status_id, viewer) do nothing returning status_id'
  ).pluck()
  // a viewer seen before (rarer): only an earlier view time changes the row
  const earlierView = sqlite.prepare<[number, string, number, string, string], number>(
    'update viewers set viewed_at = ? where viewer = ? and viewed_at > ? ' +
    'and status_id = (select id from statuses where session_id = ? and message_id = ?) returning status_id'
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
  const realViewers = sqlite.prepare<[number], number>('select count(*) from viewers where status_id = ? and is_real = 1').pluck()
  // listViewers' query on the raw connection: the full list of a busy status is read every 200 ms
  const allViewers = sqlite.prepare<[number], ViewerRow>('select * from viewers where status_id = ? order by viewed_at, viewer')

  // deliveries (issue 24): one insert-select per receipt; a redelivery or another device only moves the time earlier
  const insertDelivery = sqlite.prepare<[string, string | null, string, number, string, string]>(
    'insert into status_deliveries (status_id, recipient, number, jid, delivered_at) ' +
    'select id, ?, ?, ?, ? from statuses where session_id = ? and message_id = ? ' +
    'on conflict (status_id, recipient) do update set delivered_at = excluded.delivered_at where excluded.delivered_at < status_deliveries.delivered_at'
  )
  const oneDelivery = (d: DeliveryToRecord): void => { insertDelivery.run(d.number ?? d.jid, d.number, d.jid, d.deliveredAt, d.sessionId, d.messageId) }
  // a delivery stored under a LID moves to the number (the earlier delivery wins)
  const moveDeliveries = sqlite.prepare<[string, string, string, string, string]>(
    'insert into status_deliveries (status_id, recipient, number, jid, delivered_at) ' +
    'select d.status_id, ?, ?, ?, d.delivered_at from status_deliveries d join statuses s on s.id = d.status_id ' +
    'where d.recipient = ? and d.number is null and s.session_id = ? ' +
    'on conflict (status_id, recipient) do update set delivered_at = excluded.delivered_at where excluded.delivered_at < status_deliveries.delivered_at'
  )
  const dropLidDeliveries = sqlite.prepare<[string, string]>(
    'delete from status_deliveries where recipient = ? and number is null and status_id in (select id from statuses where session_id = ?)'
  )
  const manyDeliveries = sqlite.transaction((list: DeliveryToRecord[]): void => { for (const d of list) oneDelivery(d) })

  const changeOf = (changes: Map<number, StatusChange>, statusId: number, v: ViewToRecord): StatusChange => {
    let change = changes.get(statusId)
    if (change === undefined) changes.set(statusId, change = { sessionId: v.sessionId, messageId: v.messageId, added: [] })
    return change
  }
  const one = (v: ViewToRecord, changes: Map<number, StatusChange>): void => {
    const key = v.number ?? v.jid
    // all(), not get(): only a statement stepped to its end runs SQLite's WAL hook, i.e. the automatic
    // checkpoint; get() leaves the commit to the reset, and the WAL would grow without bound
    const inserted = insertView.all(key, v.number, v.jid, v.viewedAt, v.isReal ? 1 : 0, v.sessionId, v.messageId)
    if (inserted.length > 0) { changeOf(changes, inserted[0], v).added.push(v); return }
    for (const statusId of earlierView.all(v.viewedAt, key, v.viewedAt, v.sessionId, v.messageId)) changeOf(changes, statusId, v)
  }
  const many = sqlite.transaction((views: ViewToRecord[], changes: Map<number, StatusChange>, during?: (changes: Map<number, StatusChange>) => void): void => {
    for (const v of views) one(v, changes)
    if (during !== undefined && changes.size > 0) during(changes)
  })

  /**
   * Commits the views in one transaction (a single view without `during` is a single autocommit
   * statement, the cheapest transaction there is). Views of statuses that do not exist are skipped.
   * `during` runs inside the transaction once the views are in, when any status changed (the event log's
   * append). Returns the statuses whose viewer list changed, with the viewers that are new in each.
   */
  function record (views: ViewToRecord[], during?: (changes: Map<number, StatusChange>) => void): Map<number, StatusChange> {
    const changes = new Map<number, StatusChange>()
    if (views.length === 1 && during === undefined) one(views[0], changes)
    else if (views.length > 0) many(views, changes, during)
    return changes
  }

  /**
   * Views stored under a LID get its number: each row moves to the number's key, merged with a row the
   * number already has there (the earlier view time wins). `during` runs in the same transaction at its
   * end when any status changed (the event log's append). Returns the statuses whose viewers changed.
   */
  const mapLids = sqlite.transaction((
    sessionId: string, mappings: Array<{ lid: string, number: string }>, during?: (changed: Set<number>) => void
  ): Set<number> => {
    const changed = new Set<number>()
    for (const { lid, number } of mappings) {
      for (const row of lidRows.all(lid, sessionId)) {
        removeLidRow.run(row.status_id, lid)
        upsert.run(row.status_id, number, number, pnJid(number), row.viewed_at, row.is_real)
        changed.add(row.status_id)
      }
      moveDeliveries.run(number, number, pnJid(number), lid, sessionId)
      dropLidDeliveries.run(lid, sessionId)
    }
    if (during !== undefined && changed.size > 0) during(changed)
    return changed
  })

  return {
    record,
    /** Commits delivery receipts (one transaction); those of unknown statuses are skipped. */
    recordDeliveries: (list: DeliveryToRecord[]): void => { if (list.length === 1) oneDelivery(list[0]); else if (list.length > 1) manyDeliveries(list) },
    mapLids,
    /** LIDs of the session's views that have no number yet */
    unmappedLids: (sessionId: string, limit: number): string[] => unmapped.all(sessionId, limit),
    /** viewers of the status that are not the account's own devices (`viewerCount` of sent-statuses) */
    realViewerCount: (statusId: number): number => realViewers.get(statusId) ?? 0,
    /** listViewers, synchronously */
    list: (statusId: number): ViewerRow[] => allViewers.all(statusId)
  }
}
