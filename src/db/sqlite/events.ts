import type SQLite from 'better-sqlite3'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../database.js'
import { eventsAfter, insertEvents, LOGGED_EVENT_SELECT, type EventStore, type LoggedEvent, type NewEvent } from '../stores/events.js'
import { onSqliteConnection } from './gate.js'

// The event log on SQLite: one writer, so commit order is id order and an append needs no lock.

/** `data`'s statusId (recentlyViewed) */
export const STATUS_ID_OF_DATA = sql<string>`json_extract(data, '$.statusId')`

/** Appends inside the caller's Kysely transaction: the rows alone. */
export const appendEvents = insertEvents

/**
 * For other stores' hot paths (receipts: "receipt → event p99"): prepared statements on the raw SQLite
 * connection, run by their caller inside a transaction it holds (through `onSqliteConnection`).
 */
export function eventLog (sqlite: SQLite.Database) {
  const insert = sqlite.prepare<[string, string | null, number, string]>('insert into event_log (type, session_id, created_at, data) values (?, ?, ?, ?)')
  const after = sqlite.prepare<[number, number], LoggedEvent>(`select ${LOGGED_EVENT_SELECT} from event_log where id > ? order by id limit ?`)
  const appendAll = sqlite.transaction((events: NewEvent[]) => {
    for (const e of events) insert.run(e.type, e.sessionId, e.at, e.data)
  })
  return {
    append: (events: NewEvent[]): void => { if (events.length > 0) appendAll(events) },
    after: (id: number, limit: number): LoggedEvent[] => after.all(id, limit)
  }
}

/**
 * Appends on their own (a session's connection-status as it connects) and the feed's unfiltered reads (one after
 * each commit) as prepared statements, ~20 promises each instead of ~50 and ~25: see src/db/sqlite/sessions.ts
 * for why that counts at start ("spawn → all open", bench startup).
 */
export function preparedEvents (db: Kysely<Database>, sqlite: SQLite.Database): Pick<EventStore, 'append' | 'after'> {
  const log = eventLog(sqlite)
  return {
    async append (events) {
      if (events.length === 0) return
      await onSqliteConnection(db, sqlite, () => { log.append(events) })
    },
    after: async (after, limit, filter) => filter === undefined || Object.keys(filter).length === 0
      ? await onSqliteConnection(db, sqlite, () => log.after(after, limit))
      : await eventsAfter(db, after, limit, filter)
  }
}
