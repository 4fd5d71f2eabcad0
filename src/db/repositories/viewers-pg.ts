import type pg from 'pg'
import { inTransaction } from './pg-tx.js'
import type { DbHandle } from '../connection.js'
import type { ViewerRow } from '../database.js'
import { pnJid } from '../../platform/jid.js'
import { viewerWriter, type DeliveryToRecord, type StatusChange, type ViewToRecord } from './viewers.js'

/**
 * viewerWriter's PostgreSQL twin (same rows, same rules: one row per (status, viewer), the earliest view
 * time wins, views of unknown statuses are skipped), asynchronous. A stanza's views are one statement,
 * so one transaction: committed when the promise resolves.
 */
export function pgViewerWriter (pool: pg.Pool) {
  /**
   * `during` runs in the same transaction once the views are in, when any status changed (the event
   * log's append); without it the views are one autocommit statement.
   */
  async function record (
    views: ViewToRecord[], during?: (changes: Map<number, StatusChange>, client: pg.PoolClient) => Promise<void>
  ): Promise<Map<number, StatusChange>> {
    if (views.length === 0) return new Map()
    if (during === undefined) return await recordOn(pool, views)
    return await inTransaction(pool, async (client) => {
      const changes = await recordOn(client, views)
      if (changes.size > 0) await during(changes, client)
      return changes
    })
  }

  async function recordOn (db: pg.Pool | pg.PoolClient, views: ViewToRecord[]): Promise<Map<number, StatusChange>> {
    const changes = new Map<number, StatusChange>()
    // one row per (session, status, viewer), the earliest view: a statement may not upsert a row twice
    const unique = new Map<string, ViewToRecord>()
    const keyOf = (sessionId: string, messageId: string, viewer: string): string => `${sessionId}\n${messageId}\n${viewer}`
    for (const v of views) {
      const key = keyOf(v.sessionId, v.messageId, v.number ?? v.jid)
      const seen = unique.get(key)
      if (seen === undefined || v.viewedAt < seen.viewedAt) unique.set(key, v)
    }
    const rows = [...unique.values()]
    // xmax = 0: the row was inserted by this statement (an update of an earlier view sets it)
    const result = await db.query<{ status_id: number, viewer: string, inserted: boolean, session_id: string, message_id: string }>(
      `with done as (
         insert into viewers (status_id, viewer, number, jid, viewed_at, is_real)
         select s.id, v.viewer, v.number, v.jid, v.viewed_at, v.is_real
         from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[])
           as v(session_id, viewer, number, jid, viewed_at, is_real, message_id)
         join statuses s on s.session_id = v.session_id and s.message_id = v.message_id
         on conflict (status_id, viewer) do update set viewed_at = excluded.viewed_at where excluded.viewed_at < viewers.viewed_at
         returning status_id, viewer, (xmax = 0) as inserted)
       select done.status_id, done.viewer, done.inserted, s.session_id, s.message_id from done join statuses s on s.id = done.status_id`,
      [rows.map((v) => v.sessionId), rows.map((v) => v.number ?? v.jid), rows.map((v) => v.number), rows.map((v) => v.jid),
        rows.map((v) => v.viewedAt), rows.map((v) => v.isReal ? 1 : 0), rows.map((v) => v.messageId)])
    const inserted = new Set<string>()
    for (const r of result.rows) {
      if (!changes.has(r.status_id)) changes.set(r.status_id, { sessionId: r.session_id, messageId: r.message_id, added: [] })
      if (r.inserted) inserted.add(keyOf(r.session_id, r.message_id, r.viewer))
    }
    // new viewers in commit order, as on SQLite
    for (const [key, v] of unique) {
      if (!inserted.has(key)) continue
      for (const change of changes.values()) if (change.messageId === v.messageId && change.sessionId === v.sessionId) change.added.push(v)
    }
    return changes
  }

  async function realViewerCount (statusId: number): Promise<number> {
    const result = await pool.query<{ n: number }>('select count(*)::int as n from viewers where status_id = $1 and is_real = 1', [statusId])
    return result.rows[0]?.n ?? 0
  }

  async function list (statusId: number): Promise<ViewerRow[]> {
    return (await lists(pool, [statusId])).get(statusId) ?? []
  }

  /** The lists of several statuses in one query, on `db` (a transaction's client): by status, first view first. */
  async function lists (db: pg.Pool | pg.PoolClient, statusIds: number[]): Promise<Map<number, ViewerRow[]>> {
    const out = new Map<number, ViewerRow[]>(statusIds.map((id) => [id, []]))
    if (statusIds.length === 0) return out
    const result = await db.query<ViewerRow>('select * from viewers where status_id = any($1::bigint[]) order by status_id, viewed_at, viewer', [statusIds])
    for (const row of result.rows) out.get(Number(row.status_id))?.push(row)
    return out
  }

  /** As on SQLite; `during` runs in the same transaction at its end when any status changed (the event log's append). */
  async function mapLids (
    sessionId: string, mappings: Array<{ lid: string, number: string }>, during?: (changed: Set<number>, client: pg.PoolClient) => Promise<void>
  ): Promise<Set<number>> {
    return await inTransaction(pool, async (client) => {
      const changed = new Set<number>()
      for (const { lid, number } of mappings) {
        const moved = await client.query<{ status_id: number, viewed_at: number, is_real: number }>(
          `delete from viewers v using statuses s
           where s.id = v.status_id and v.viewer = $1 and v.number is null and s.session_id = $2
           returning v.status_id, v.viewed_at, v.is_real`, [lid, sessionId])
        for (const row of moved.rows) {
          await client.query(
            `insert into viewers (status_id, viewer, number, jid, viewed_at, is_real) values ($1, $2, $2, $3, $4, $5)
             on conflict (status_id, viewer) do update set viewed_at = excluded.viewed_at where excluded.viewed_at < viewers.viewed_at`,
            [row.status_id, number, pnJid(number), row.viewed_at, row.is_real])
          changed.add(row.status_id)
        }
        // deliveries stored under the LID move to the number too (the earlier one wins)
        await client.query(
          `with moved as (delete from status_deliveries d using statuses s
             where s.id = d.status_id and d.recipient = $1 and d.number is null and s.session_id = $2 returning d.status_id, d.delivered_at)
           insert into status_deliveries (status_id, recipient, number, jid, delivered_at) select status_id, $3, $3, $4, delivered_at from moved
           on conflict (status_id, recipient) do update set delivered_at = excluded.delivered_at where excluded.delivered_at < status_deliveries.delivered_at`,
          [lid, sessionId, number, pnJid(number)])
      }
      if (during !== undefined && changed.size > 0) await during(changed, client)
      return changed
    })
  }

  async function unmappedLids (sessionId: string, limit: number): Promise<string[]> {
    const result = await pool.query<{ viewer: string }>(
      'select distinct v.viewer from viewers v join statuses s on s.id = v.status_id where v.number is null and s.session_id = $1 limit $2',
      [sessionId, limit])
    return result.rows.map((r) => r.viewer)
  }

  /** Delivery receipts in one statement (the earliest per status and recipient is kept). */
  async function recordDeliveries (all: DeliveryToRecord[]): Promise<void> {
    // a statement may not upsert a row twice: one per (session, status, recipient), the earliest
    const unique = new Map<string, DeliveryToRecord>()
    for (const d of all) {
      const key = `${d.sessionId}\n${d.messageId}\n${d.number ?? d.jid}`
      const seen = unique.get(key)
      if (seen === undefined || d.deliveredAt < seen.deliveredAt) unique.set(key, d)
    }
    const list = [...unique.values()]
    if (list.length === 0) return
    await pool.query(
      `insert into status_deliveries (status_id, recipient, number, jid, delivered_at)
       select s.id, d.recipient, d.number, d.jid, d.delivered_at
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[]) as d(session_id, recipient, number, jid, delivered_at, message_id)
       join statuses s on s.session_id = d.session_id and s.message_id = d.message_id
       on conflict (status_id, recipient) do update set delivered_at = excluded.delivered_at where excluded.delivered_at < status_deliveries.delivered_at`,
      [list.map((d) => d.sessionId), list.map((d) => d.number ?? d.jid), list.map((d) => d.number), list.map((d) => d.jid),
        list.map((d) => d.deliveredAt), list.map((d) => d.messageId)])
  }

  return { record, recordDeliveries, mapLids, unmappedLids, realViewerCount, list, lists }
}

/** The dialect's viewer writer (SQLite: synchronous; PostgreSQL: promises). */
export function viewerWriterFor (handle: DbHandle): ReturnType<typeof viewerWriter> | ReturnType<typeof pgViewerWriter> {
  return handle.dialect === 'sqlite' ? viewerWriter(handle.sqlite) : pgViewerWriter(handle.pool)
}
