import { sql, type Kysely } from 'kysely'
import type { Database, ViewerRow } from '../database.js'
import { EVENT_LOG_LOCK, recentlyViewed, type NewEvent } from './events.js'
import { listViewers, type CommitReads, type DeliveryToRecord, type InCommit, type ReceiptPart, type StatusChange, type ViewToRecord } from './viewers.js'
import { pnJid } from '../../jid.js'

type Db = Kysely<Database>

/**
 * The receipt path on PostgreSQL: the SQLite store's rows and rules (one row per (status, viewer), the
 * earliest view time wins, views of unknown statuses are skipped), a turn's views one statement (unnest)
 * in one Kysely transaction with its events: committed when the promise resolves.
 */
export function createPostgresReceipts (db: Db): ReceiptPart {
  async function reads (trx: Db, need: { counts?: number[], lists?: number[] }): Promise<CommitReads> {
    const counts = new Map<number, number>()
    if ((need.counts ?? []).length > 0) {
      const r = await sql<{ status_id: number, n: number }>`select status_id, count(*)::int as n from viewers
        where status_id = any(${need.counts}::bigint[]) and is_real = 1 group by status_id`.execute(trx)
      for (const id of need.counts ?? []) counts.set(id, 0)
      for (const row of r.rows) counts.set(Number(row.status_id), row.n)
    }
    return { counts, lists: await lists(trx, need.lists ?? []) }
  }

  /** The lists of several statuses in one query: by status, first view first. */
  async function lists (trx: Db, statusIds: number[]): Promise<Map<number, ViewerRow[]>> {
    const out = new Map<number, ViewerRow[]>(statusIds.map((id) => [id, []]))
    if (statusIds.length === 0) return out
    const rows = await trx.selectFrom('viewers').selectAll().where('status_id', 'in', statusIds).orderBy('status_id').orderBy('viewed_at').orderBy('viewer').execute()
    for (const row of rows) out.get(Number(row.status_id))?.push(row)
    return out
  }

  async function appendFor<C> (trx: Db, changes: C, inCommit: InCommit<C>): Promise<void> {
    await append(trx, inCommit.events(changes, await reads(trx, inCommit.needs(changes))))
  }

  async function record (trx: Db, views: ViewToRecord[]): Promise<Map<number, StatusChange>> {
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
    const result = await sql<{ status_id: number, viewer: string, inserted: boolean, session_id: string, message_id: string }>`
      with done as (
        insert into viewers (status_id, viewer, number, jid, viewed_at, is_real)
        select s.id, v.viewer, v.number, v.jid, v.viewed_at, v.is_real
        from unnest(${rows.map((v) => v.sessionId)}::text[], ${rows.map((v) => v.number ?? v.jid)}::text[], ${rows.map((v) => v.number)}::text[],
          ${rows.map((v) => v.jid)}::text[], ${rows.map((v) => v.viewedAt)}::bigint[], ${rows.map((v) => v.isReal ? 1 : 0)}::bigint[],
          ${rows.map((v) => v.messageId)}::text[])
          as v(session_id, viewer, number, jid, viewed_at, is_real, message_id)
        join statuses s on s.session_id = v.session_id and s.message_id = v.message_id
        on conflict (status_id, viewer) do update set viewed_at = excluded.viewed_at where excluded.viewed_at < viewers.viewed_at
        returning status_id, viewer, (xmax = 0) as inserted)
      select done.status_id, done.viewer, done.inserted, s.session_id, s.message_id from done join statuses s on s.id = done.status_id`.execute(trx)
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

  /** Delivery receipts in one statement (the earliest per status and recipient is kept). */
  async function recordDeliveries (trx: Db, all: DeliveryToRecord[]): Promise<void> {
    // a statement may not upsert a row twice: one per (session, status, recipient), the earliest
    const unique = new Map<string, DeliveryToRecord>()
    for (const d of all) {
      const key = `${d.sessionId}\n${d.messageId}\n${d.number ?? d.jid}`
      const seen = unique.get(key)
      if (seen === undefined || d.deliveredAt < seen.deliveredAt) unique.set(key, d)
    }
    const list = [...unique.values()]
    if (list.length === 0) return
    await sql`insert into status_deliveries (status_id, recipient, number, jid, delivered_at)
      select s.id, d.recipient, d.number, d.jid, d.delivered_at
      from unnest(${list.map((d) => d.sessionId)}::text[], ${list.map((d) => d.number ?? d.jid)}::text[], ${list.map((d) => d.number)}::text[],
        ${list.map((d) => d.jid)}::text[], ${list.map((d) => d.deliveredAt)}::bigint[], ${list.map((d) => d.messageId)}::text[])
        as d(session_id, recipient, number, jid, delivered_at, message_id)
      join statuses s on s.session_id = d.session_id and s.message_id = d.message_id
      on conflict (status_id, recipient) do update set delivered_at = excluded.delivered_at where excluded.delivered_at < status_deliveries.delivered_at`.execute(trx)
  }

  return {
    async commitReceipts ({ views, deliveries }, inCommit) {
      if (views.length + deliveries.length === 0) return new Map()
      return await db.transaction().execute(async (trx) => {
        const changes = views.length > 0 ? await record(trx, views) : new Map<number, StatusChange>()
        await recordDeliveries(trx, deliveries)
        if (changes.size > 0) await appendFor(trx, changes, inCommit)
        return changes
      })
    },
    mapLids: async (sessionId, mappings, inCommit) => await db.transaction().execute(async (trx) => {
      const changed = new Set<number>()
      for (const { lid, number } of mappings) {
        const jid = pnJid(number)
        const moved = await sql<{ status_id: number, viewed_at: number, is_real: number }>`delete from viewers v using statuses s
          where s.id = v.status_id and v.viewer = ${lid} and v.number is null and s.session_id = ${sessionId}
          returning v.status_id, v.viewed_at, v.is_real`.execute(trx)
        for (const row of moved.rows) {
          await sql`insert into viewers (status_id, viewer, number, jid, viewed_at, is_real) values (${row.status_id}, ${number}, ${number}, ${jid}, ${row.viewed_at}, ${row.is_real})
            on conflict (status_id, viewer) do update set viewed_at = excluded.viewed_at where excluded.viewed_at < viewers.viewed_at`.execute(trx)
          changed.add(row.status_id)
        }
        // deliveries stored under the LID move to the number too (the earlier one wins)
        await sql`with moved as (delete from status_deliveries d using statuses s
            where s.id = d.status_id and d.recipient = ${lid} and d.number is null and s.session_id = ${sessionId} returning d.status_id, d.delivered_at)
          insert into status_deliveries (status_id, recipient, number, jid, delivered_at) select status_id, ${number}, ${number}, ${jid}, delivered_at from moved
          on conflict (status_id, recipient) do update set delivered_at = excluded.delivered_at where excluded.delivered_at < status_deliveries.delivered_at`.execute(trx)
      }
      if (changed.size > 0) await appendFor(trx, changed, inCommit)
      return changed
    }),
    async unmappedLids (sessionId, limit) {
      const rows = await db.selectFrom('viewers as v').innerJoin('statuses as s', 's.id', 'v.status_id')
        .select('v.viewer').distinct().where('v.number', 'is', null).where('s.session_id', '=', sessionId).limit(limit).execute()
      return rows.map((r) => r.viewer)
    },
    async commitListEvents (statusIds, events) {
      await db.transaction().execute(async (trx) => { await append(trx, events(await lists(trx, statusIds))) })
    },
    list: async (statusId) => await listViewers(db, statusId),
    recentlyViewed: async (spanMs) => await recentlyViewed(db, 'postgres', spanMs)
  }
}

/**
 * Appends inside the transaction: the log's lock, then the rows, in one round trip (no joined row, so no
 * id, exists before the lock's row). Last in the transaction: the lock is held to the commit.
 */
async function append (trx: Db, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return
  await sql`insert into event_log (type, session_id, created_at, data)
    select t.type, t.session_id, t.at, t.data
    from (select pg_advisory_xact_lock(${EVENT_LOG_LOCK})) as lock,
      unnest(${events.map((e) => e.type)}::text[], ${events.map((e) => e.sessionId)}::text[], ${events.map((e) => e.at)}::bigint[], ${events.map((e) => e.data)}::text[])
        with ordinality as t(type, session_id, at, data, n)
    order by t.n`.execute(trx)
}
