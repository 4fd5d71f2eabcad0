import type SQLite from 'better-sqlite3'
import { sql, type Kysely } from 'kysely'
import type { DbHandle } from '../connection.js'
import type { Database, EventLogRow } from '../database.js'
import { onSqliteConnection } from './sqlite-gate.js'

// The event log (migration 008). Rows are appended in the transaction of the change they report; the id
// is the event's eventId. Ids must become visible in id order (a reader that saw id n never later finds a
// smaller one): SQLite has one writer, so commit order is id order; on PostgreSQL every appending
// transaction takes one advisory lock first and holds it to its commit, so ids are allocated and
// committed one transaction after another, cluster-wide. Appends come last in their transaction, so the
// lock is held only for the insert and the commit.

type Db = Kysely<Database>

/** pg_advisory_xact_lock key of the event log: "evtlog" in ASCII */
export const EVENT_LOG_LOCK = 0x6576746c6f67

export interface NewEvent {
  type: string
  sessionId: string | null
  at: number
  /** the payload as JSON */
  data: string
}

export interface EventFilter {
  /** only this session's events */
  sessionId?: string
  /** only these sessions' events (a scoped key's sessions); null or absent: every session */
  sessionIds?: readonly string[] | null
  /** only events up to this id */
  upTo?: number
}

/** A transaction a change runs in; the events it reports are appended at its end (`EventStore.within`). */
export type ChangeTransaction = Kysely<Database>

export interface EventStore {
  /**
   * Other processes append to this log too (PostgreSQL, several nodes): a reader that wants their rows
   * must look now and then. False: every append goes through this process.
   */
  readonly shared: boolean
  /** appends in a transaction of its own; committed when it resolves */
  append: (events: NewEvent[]) => Promise<void>
  /**
   * Runs `work` in one transaction and appends the events `events()` then names at its end, in the same
   * transaction: committed together when it resolves, nothing when `work` throws.
   */
  within: <T>(work: (trx: ChangeTransaction) => Promise<T>, events: () => NewEvent[]) => Promise<T>
  /** committed events after `after`, in id order */
  after: (after: number, limit: number, filter?: EventFilter) => Promise<EventLogRow[]>
  /** the highest id in the log (0 when empty) */
  lastId: () => Promise<number>
  /** removes events older than `before`, except those the webhook cursor has not passed yet; how many went */
  prune: (before: number) => Promise<number>
}

/** One Kysely implementation: the dialects differ only in the append's lock and the JSON read (both here). */
export function eventStore (handle: DbHandle): EventStore {
  const db = handle.db
  // SQLite: appends on their own (a session's connection-status as it connects) and the feed's reads (one after
  // each commit) as prepared statements, ~20 promises each instead of ~50 and ~25: see sqliteSessionStore for why
  // that counts at start ("spawn → all open", bench startup)
  const raw = handle.dialect === 'sqlite' ? { sqlite: handle.sqlite, log: sqliteEventLog(handle.sqlite) } : null
  return {
    shared: handle.dialect === 'postgres',
    async append (events) {
      if (events.length === 0) return
      if (raw !== null) { await onSqliteConnection(db, raw.sqlite, () => { raw.log.append(events) }); return }
      await db.transaction().execute(async (trx) => { await appendEvents(trx, handle.dialect, events) })
    },
    async within (work, events) {
      return await db.transaction().execute(async (trx) => {
        const value = await work(trx)
        await appendEvents(trx, handle.dialect, events())
        return value
      })
    },
    after: async (after, limit, filter) => raw !== null && (filter === undefined || Object.keys(filter).length === 0)
      ? await onSqliteConnection(db, raw.sqlite, () => raw.log.after(after, limit))
      : await eventsAfter(db, after, limit, filter),
    async lastId () {
      const row = await db.selectFrom('event_log').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst()
      return Number(row?.id ?? 0)
    },
    async prune (before) {
      const result = await db.deleteFrom('event_log')
        .where('created_at', '<', before)
        .where('id', '<=', (eb) => eb.selectFrom('event_cursors').select('last_id').where('name', '=', 'webhooks'))
        .executeTakeFirst()
      return Number(result.numDeletedRows)
    }
  }
}

/** Appends inside the caller's Kysely transaction (PostgreSQL: under the log's lock, held to the commit). For stores. */
export async function appendEvents (trx: Db, dialect: DbHandle['dialect'], events: NewEvent[]): Promise<void> {
  if (events.length === 0) return
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${EVENT_LOG_LOCK})`.execute(trx)
  await trx.insertInto('event_log')
    .values(events.map((e) => ({ type: e.type, session_id: e.sessionId, created_at: e.at, data: e.data })))
    .execute()
}

async function eventsAfter (db: Db, after: number, limit: number, f: EventFilter = {}): Promise<EventLogRow[]> {
  let q = db.selectFrom('event_log').selectAll().where('id', '>', after)
  if (f.upTo !== undefined) q = q.where('id', '<=', f.upTo)
  if (f.sessionId !== undefined) q = q.where('session_id', '=', f.sessionId)
  if (f.sessionIds !== undefined && f.sessionIds !== null) {
    if (f.sessionIds.length === 0) return []
    q = q.where('session_id', 'in', f.sessionIds)
  }
  return await q.orderBy('id').limit(limit).execute()
}

/**
 * The statuses named by status-viewers-added events in the log's last `spanMs` (by created_at, counted back
 * from its newest event), with their sessions: what was viewed in the moments before the service stopped
 * (the viewer store's `recentlyViewed`, for viewer ingest's recovery at start).
 */
export async function recentlyViewed (db: Db, dialect: DbHandle['dialect'], spanMs: number): Promise<Array<{ statusId: number, sessionId: string }>> {
  const newest = await db.selectFrom('event_log').select('created_at').orderBy('id', 'desc').limit(1).executeTakeFirst()
  if (newest === undefined) return []
  const statusId = dialect === 'sqlite' ? sql<string>`json_extract(data, '$.statusId')` : sql<string>`(data::json ->> 'statusId')`
  const rows = await db.selectFrom('event_log')
    .select([statusId.as('status_id'), 'session_id'])
    .where('created_at', '>=', Number(newest.created_at) - spanMs)
    .where('type', '=', 'status-viewers-added')
    .distinct()
    .execute()
  return rows.flatMap((r) => r.session_id === null ? [] : [{ statusId: Number(r.status_id), sessionId: r.session_id }])
}

/**
 * For other stores' hot paths (receipts: "receipt → event p99"): prepared statements on the raw SQLite
 * connection, run by their caller inside a transaction it holds (through `onSqliteConnection`).
 */
export function sqliteEventLog (sqlite: SQLite.Database) {
  const insert = sqlite.prepare<[string, string | null, number, string]>('insert into event_log (type, session_id, created_at, data) values (?, ?, ?, ?)')
  const after = sqlite.prepare<[number, number], EventLogRow>('select * from event_log where id > ? order by id limit ?')
  const appendAll = sqlite.transaction((events: NewEvent[]) => {
    for (const e of events) insert.run(e.type, e.sessionId, e.at, e.data)
  })
  return {
    append: (events: NewEvent[]): void => { if (events.length > 0) appendAll(events) },
    after: (id: number, limit: number): EventLogRow[] => after.all(id, limit)
  }
}

export type SqliteEventLog = ReturnType<typeof sqliteEventLog>

/**
 * PostgreSQL, inside a transaction the caller holds on `client` (the receipt commit's): the log's lock,
 * then the rows in one statement. Last in the transaction: the lock is held to the commit. For stores.
 */
export async function pgAppendEvents (client: { query: (text: string, values?: unknown[]) => Promise<unknown> }, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return
  // one round trip: no joined row (so no id) exists before the lock's row, i.e. before the lock is held
  await client.query(
    `insert into event_log (type, session_id, created_at, data)
     select t.type, t.session_id, t.at, t.data
     from (select pg_advisory_xact_lock($5)) as lock,
       unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) with ordinality as t(type, session_id, at, data, n)
     order by t.n`,
    [events.map((e) => e.type), events.map((e) => e.sessionId), events.map((e) => e.at), events.map((e) => e.data), EVENT_LOG_LOCK])
}
