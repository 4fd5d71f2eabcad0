import { CompiledQuery, sql, type Kysely } from 'kysely'
import type pg from 'pg'
import type { Database } from '../database.js'
import { recentlyViewed, type NewEvent } from '../stores/events.js'
import { listViewers, VIEWER_FIELDS_SQL, type CommitReads, type DeliveryToRecord, type InCommit, type ReceiptPart, type StatusChange, type ViewerRecord, type ViewToRecord } from '../stores/viewers.js'
import { EVENT_LOG_LOCK, STATUS_ID_OF_DATA } from './events.js'
import { pnJid } from '../../jid.js'

type Db = Kysely<Database>
/** One statement on whatever runs it: a pool client (the receipt commit) or a Kysely transaction; the rows. */
type Run = <R>(name: string, text: string, values: unknown[]) => Promise<R[]>

/** on a Kysely transaction (the paths that are not the receipt commit) */
const onKysely = (trx: Db): Run => async <R>(_name: string, text: string, values: unknown[]) =>
  (await trx.executeQuery<R>(CompiledQuery.raw(text, values))).rows as R[]

/**
 * on a pool client, as a named statement: parsed and planned once per connection, not per turn. Why the
 * receipt commit skips Kysely: "receipts committed, one PostgreSQL node" (bench/NOTES.md) went 7,203 → 5,693/s
 * when this path moved from the pool to Kysely; one turn is BEGIN, the views, the events' reads when needed,
 * the append, COMMIT, and every statement saved or planned once counts at thousands of receipts a second.
 */
const onClient = (client: pg.PoolClient): Run => async <R>(name: string, text: string, values: unknown[]) =>
  (await client.query({ name, text, values })).rows as R[]

// xmax = 0: the row was inserted by this statement (an update of an earlier view sets it)
const RECORD_VIEWS = `with done as (
    insert into viewers (status_id, viewer, number, jid, viewed_at, is_real)
    select s.id, v.viewer, v.number, v.jid, v.viewed_at, v.is_real
    from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[])
      as v(session_id, viewer, number, jid, viewed_at, is_real, message_id)
    join statuses s on s.session_id = v.session_id and s.message_id = v.message_id
    on conflict (status_id, viewer) do update set viewed_at = excluded.viewed_at where excluded.viewed_at < viewers.viewed_at
    returning status_id, viewer, (xmax = 0) as inserted)
  select done.status_id, done.viewer, done.inserted, s.session_id, s.message_id from done join statuses s on s.id = done.status_id`
const RECORD_DELIVERIES = `insert into status_deliveries (status_id, recipient, number, jid, delivered_at)
  select s.id, d.recipient, d.number, d.jid, d.delivered_at
  from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::text[]) as d(session_id, recipient, number, jid, delivered_at, message_id)
  join statuses s on s.session_id = d.session_id and s.message_id = d.message_id
  on conflict (status_id, recipient) do update set delivered_at = excluded.delivered_at where excluded.delivered_at < status_deliveries.delivered_at`
// kept on the status row in this same transaction (migration 019's triggers)
const REAL_COUNTS = 'select id as status_id, viewer_count as n from statuses where id = any($1::bigint[])'
const LISTS = `select ${VIEWER_FIELDS_SQL} from viewers where status_id = any($1::bigint[]) order by status_id, viewed_at, viewer`
// Appends inside the transaction: the log's lock, then the rows, in one round trip (no joined row, so no
// id, exists before the lock's row). Last in the transaction: the lock is held to the commit.
const APPEND = `insert into event_log (type, session_id, created_at, data)
  select t.type, t.session_id, t.at, t.data
  from (select pg_advisory_xact_lock($5)) as lock,
    unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) with ordinality as t(type, session_id, at, data, n)
  order by t.n`

/**
 * The receipt path on PostgreSQL: the SQLite store's rows and rules (one row per (status, viewer), the
 * earliest view time wins, views of unknown statuses are skipped). A turn's views are one statement
 * (unnest), its deliveries another, in one transaction with its events: committed when the promise
 * resolves. The receipt commit runs on a pool client with named statements (see onClient); the rest on Kysely.
 */
export function receipts (db: Db, pool: pg.Pool): ReceiptPart {
  async function reads (run: Run, need: { counts?: number[], lists?: number[] }): Promise<CommitReads> {
    const counts = new Map<number, number>()
    if ((need.counts ?? []).length > 0) {
      const rows = await run<{ status_id: number, n: number }>('receipts-counts', REAL_COUNTS, [need.counts])
      for (const id of need.counts ?? []) counts.set(id, 0)
      for (const row of rows) counts.set(Number(row.status_id), row.n)
    }
    return { counts, lists: await lists(run, need.lists ?? []) }
  }

  /** The lists of several statuses in one query: by status, first view first. */
  async function lists (run: Run, statusIds: number[]): Promise<Map<number, ViewerRecord[]>> {
    const out = new Map<number, ViewerRecord[]>(statusIds.map((id) => [id, []]))
    if (statusIds.length === 0) return out
    for (const row of await run<ViewerRecord>('receipts-lists', LISTS, [statusIds])) out.get(Number(row.statusId))?.push(row)
    return out
  }

  async function appendFor<C> (run: Run, changes: C, inCommit: InCommit<C>): Promise<void> {
    await append(run, inCommit.events(changes, await reads(run, inCommit.needs(changes))))
  }

  async function record (run: Run, views: ViewToRecord[]): Promise<Map<number, StatusChange>> {
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
    const result = await run<{ status_id: number, viewer: string, inserted: boolean, session_id: string, message_id: string }>('receipts-views', RECORD_VIEWS, [
      rows.map((v) => v.sessionId), rows.map((v) => v.number ?? v.jid), rows.map((v) => v.number), rows.map((v) => v.jid),
      rows.map((v) => v.viewedAt), rows.map((v) => v.isReal ? 1 : 0), rows.map((v) => v.messageId)
    ])
    const inserted = new Set<string>()
    for (const r of result) {
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
  async function recordDeliveries (run: Run, all: DeliveryToRecord[]): Promise<void> {
    // a statement may not upsert a row twice: one per (session, status, recipient), the earliest
    const unique = new Map<string, DeliveryToRecord>()
    for (const d of all) {
      const key = `${d.sessionId}\n${d.messageId}\n${d.number ?? d.jid}`
      const seen = unique.get(key)
      if (seen === undefined || d.deliveredAt < seen.deliveredAt) unique.set(key, d)
    }
    const list = [...unique.values()]
    if (list.length === 0) return
    await run('receipts-deliveries', RECORD_DELIVERIES, [list.map((d) => d.sessionId), list.map((d) => d.number ?? d.jid), list.map((d) => d.number),
      list.map((d) => d.jid), list.map((d) => d.deliveredAt), list.map((d) => d.messageId)])
  }

  return {
    async commitReceipts ({ views, deliveries }, inCommit) {
      if (views.length + deliveries.length === 0) return new Map()
      const client = await pool.connect()
      let broken: Error | undefined
      try {
        const run = onClient(client)
        await client.query('begin')
        try {
          const changes = views.length > 0 ? await record(run, views) : new Map<number, StatusChange>()
          await recordDeliveries(run, deliveries)
          if (changes.size > 0) await appendFor(run, changes, inCommit)
          await client.query('commit')
          return changes
        } catch (err) {
          // a connection that cannot roll back is not handed out again
          await client.query('rollback').catch((e: Error) => { broken = e })
          throw err
        }
      } finally {
        client.release(broken)
      }
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
      if (changed.size > 0) await appendFor(onKysely(trx), changed, inCommit)
      return changed
    }),
    async unmappedLids (sessionId, limit) {
      const rows = await db.selectFrom('viewers as v').innerJoin('statuses as s', 's.id', 'v.status_id')
        .select('v.viewer').distinct().where('v.number', 'is', null).where('s.session_id', '=', sessionId).limit(limit).execute()
      return rows.map((r) => r.viewer)
    },
    async commitListEvents (statusIds, events) {
      await db.transaction().execute(async (trx) => {
        const run = onKysely(trx)
        await append(run, events(await lists(run, statusIds)))
      })
    },
    list: async (statusId) => await listViewers(db, statusId),
    recentlyViewed: async (spanMs) => await recentlyViewed(db, STATUS_ID_OF_DATA, spanMs)
  }
}

async function append (run: Run, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return
  await run('receipts-append', APPEND,
    [events.map((e) => e.type), events.map((e) => e.sessionId), events.map((e) => e.at), events.map((e) => e.data), EVENT_LOG_LOCK])
}
