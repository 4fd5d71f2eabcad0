import type SQLite from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database } from '../database.js'
import { recentlyViewed, type NewEvent } from '../stores/events.js'
import { listViewers, type CommitReads, type DeliveryToRecord, type InCommit, type LidMapping, type ReceiptPart, type ReceiptTurn, type StatusChange, type ViewerRecord, type ViewToRecord } from '../stores/viewers.js'
import { pnJid } from '../../jid.js'
import { eventLog, STATUS_ID_OF_DATA } from './events.js'
import { onSqliteConnection } from './gate.js'

type Db = Kysely<Database>

/**
 * `order by viewed_at, viewer` in JS: viewer keys are digits or ASCII jids, so comparing UTF-16 code units
 * orders them as SQLite's binary collation does (checked against SQLite's order in test/db/hot-paths.test.ts).
 */
function byViewTime (a: ViewerRecord, b: ViewerRecord): number {
  return a.viewedAt - b.viewedAt || (a.viewer < b.viewer ? -1 : a.viewer > b.viewer ? 1 : 0)
}

/**
 * SQLite: the receipt path in prepared statements, each commit one synchronous better-sqlite3 transaction
 * run through onSqliteConnection (never inside another caller's open transaction, which it waits out).
 * The bench figures they hold: "receipts ÷ bare Baileys" and "receipt → event p99" (bench/NOTES.md).
 */
export function receipts (db: Db, sqlite: SQLite.Database): ReceiptPart {
  const log = eventLog(sqlite)
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
  // kept on the status row in this same transaction (migration 019's triggers)
  const realViewers = sqlite.prepare<[number], number>('select viewer_count from statuses where id = ?').pluck()
  // the full list of a busy status is read for its status-viewers-update (at most once a window: viewers-update.ts),
  // synchronously, in the commit: the receipts arriving meanwhile wait for it. Read as arrays in the table's own
  // order and sorted here, not by SQLite: no index holds a status's viewers by time (one more on every receipt's
  // insert), so `order by viewed_at, viewer` sorted them in a temporary B-tree, and better-sqlite3 builds an
  // object row field by field. 5,000 viewers: 12.5 → 6.8 ms (bench/NOTES.md, "The list read for each `status-viewers-update`").
  const allViewerRows = sqlite.prepare<[number], [string, string | null, string, number, number]>(
    'select viewer, number, jid, viewed_at, is_real from viewers where status_id = ?'
  ).raw()
  const allViewers = (statusId: number): ViewerRecord[] => allViewerRows.all(statusId)
    .map(([viewer, number, jid, viewedAt, isReal]) => ({ statusId, viewer, number, jid, viewedAt, isReal }))
    .sort(byViewTime)

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

  const reads = (need: { counts?: number[], lists?: number[] }): CommitReads => ({
    counts: new Map((need.counts ?? []).map((id) => [id, realViewers.get(id) ?? 0])),
    lists: new Map((need.lists ?? []).map((id) => [id, allViewers(id)]))
  })
  const appendFor = <C>(changes: C, inCommit: InCommit<C>): void => { log.append(inCommit.events(changes, reads(inCommit.needs(changes)))) }

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
  const record = sqlite.transaction(({ views, deliveries }: ReceiptTurn, inCommit: InCommit<Map<number, StatusChange>>): Map<number, StatusChange> => {
    const changes = new Map<number, StatusChange>()
    for (const v of views) one(v, changes)
    for (const d of deliveries) oneDelivery(d)
    if (changes.size > 0) appendFor(changes, inCommit)
    return changes
  })
  const mapLids = sqlite.transaction((sessionId: string, mappings: LidMapping[], inCommit: InCommit<Set<number>>): Set<number> => {
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
    if (changed.size > 0) appendFor(changed, inCommit)
    return changed
  })
  const listEvents = sqlite.transaction((statusIds: number[], events: (lists: Map<number, ViewerRecord[]>) => NewEvent[]): void => {
    log.append(events(reads({ lists: statusIds }).lists))
  })
  const run = async <T>(work: () => T): Promise<T> => await onSqliteConnection(db, sqlite, work)

  return {
    commitReceipts: async (turn, inCommit) => turn.views.length + turn.deliveries.length === 0 ? new Map() : await run(() => record(turn, inCommit)),
    mapLids: async (sessionId, mappings, inCommit) => await run(() => mapLids(sessionId, mappings, inCommit)),
    unmappedLids: async (sessionId, limit) => await run(() => unmapped.all(sessionId, limit)),
    commitListEvents: async (statusIds, events) => { await run(() => { listEvents(statusIds, events) }) },
    list: async (statusId) => await listViewers(db, statusId),
    recentlyViewed: async (spanMs) => await recentlyViewed(db, STATUS_ID_OF_DATA, spanMs)
  }
}
