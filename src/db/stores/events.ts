import type { Kysely, RawBuilder } from 'kysely'
import type { Database } from '../database.js'

/** One committed event of the log: the port's own type, which plugins import (never the table's row). */
export interface LoggedEvent {
  /** the event's eventId */
  id: number
  type: string
  sessionId: string | null
  /** milliseconds since the epoch */
  createdAt: number
  /** the payload as JSON, without its eventId (stored as it goes out: feeds and webhook bodies are built from it) */
  data: string
}

/**
 * The columns of a LoggedEvent, aliased in SQL so the feed's reads (hot: one after each commit) map nothing
 * (the one row → LoggedEvent mapping, for both backends and SQLite's prepared read).
 */
export const LOGGED_EVENT_COLUMNS = ['id', 'type', 'session_id as sessionId', 'created_at as createdAt', 'data'] as const
/** the same without the payload (the webhook fan-out reads a payload only when an endpoint takes the event) */
export const LOGGED_EVENT_HEAD_COLUMNS = ['id', 'type', 'session_id as sessionId', 'created_at as createdAt'] as const
/** LOGGED_EVENT_COLUMNS as raw SQL (SQLite's prepared statement) */
export const LOGGED_EVENT_SELECT = 'id, type, session_id as sessionId, created_at as createdAt, data'

// The event log (migration 008). Rows are appended in the transaction of the change they report; the id
// is the event's eventId. Ids must become visible in id order (a reader that saw id n never later finds a
// smaller one): SQLite has one writer, so commit order is id order; on PostgreSQL every appending
// transaction takes one advisory lock first and holds it to its commit, so ids are allocated and
// committed one transaction after another, cluster-wide. Appends come last in their transaction, so the
// lock is held only for the insert and the commit.

type Db = Kysely<Database>

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

export interface EventStore {
  /**
   * Other processes append to this log too (PostgreSQL, several nodes): a reader that wants their rows
   * must look now and then. False: every append goes through this process.
   */
  readonly shared: boolean
  /** appends in a transaction of its own; committed when it resolves */
  append: (events: NewEvent[]) => Promise<void>
  /** committed events after `after`, in id order */
  after: (after: number, limit: number, filter?: EventFilter) => Promise<LoggedEvent[]>
  /** the highest id in the log (0 when empty) */
  lastId: () => Promise<number>
  /** removes events older than `before`, except those the webhook cursor has not passed yet; how many went */
  prune: (before: number) => Promise<number>
}

/** How a backend appends events inside a Kysely transaction it is given (PostgreSQL: under the log's lock, held to the commit). */
export type AppendEvents = (trx: Db, events: NewEvent[]) => Promise<void>

/** What differs per backend: whether other processes append too, and the append. */
export interface EventBackend { shared: boolean, append: AppendEvents }

/** The Kysely event store; a backend may replace a method with its own (SQLite: `append` and `after`, src/db/sqlite/events.ts). */
export function eventStore (db: Db, backend: EventBackend): EventStore {
  return {
    shared: backend.shared,
    async append (events) {
      if (events.length === 0) return
      await db.transaction().execute(async (trx) => { await backend.append(trx, events) })
    },
    after: async (after, limit, filter) => await eventsAfter(db, after, limit, filter),
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

/** The rows alone, inside the caller's transaction: SQLite's whole append, PostgreSQL's after its lock. */
export async function insertEvents (trx: Db, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return
  await trx.insertInto('event_log')
    .values(events.map((e) => ({ type: e.type, session_id: e.sessionId, created_at: e.at, data: e.data })))
    .execute()
}

export async function eventsAfter (db: Db, after: number, limit: number, f: EventFilter = {}): Promise<LoggedEvent[]> {
  let q = db.selectFrom('event_log').select(LOGGED_EVENT_COLUMNS).where('id', '>', after)
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
 * (the viewer store's `recentlyViewed`, for viewer ingest's recovery at start). `statusIdOfData`: the
 * backend's read of `data`'s statusId (JSON functions differ).
 */
export async function recentlyViewed (db: Db, statusIdOfData: RawBuilder<string>, spanMs: number): Promise<Array<{ statusId: number, sessionId: string }>> {
  const newest = await db.selectFrom('event_log').select('created_at').orderBy('id', 'desc').limit(1).executeTakeFirst()
  if (newest === undefined) return []
  const rows = await db.selectFrom('event_log')
    .select([statusIdOfData.as('status_id'), 'session_id'])
    .where('created_at', '>=', Number(newest.created_at) - spanMs)
    .where('type', '=', 'status-viewers-added')
    .distinct()
    .execute()
  return rows.flatMap((r) => r.session_id === null ? [] : [{ statusId: Number(r.status_id), sessionId: r.session_id }])
}
