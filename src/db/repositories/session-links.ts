import type SQLite from 'better-sqlite3'
import type pg from 'pg'
import type { DbHandle } from '../connection.js'
import type { SessionTable } from '../database.js'
import { pgAppendEvents, sqliteEventLog, type NewEvent } from './events.js'
import { inTransaction } from './pg-tx.js'
import { writeOrder } from '../write-order.js'

export interface StoredSession { id: string, authMethod: SessionTable['auth_method'], phoneNumber: string | null }

/**
 * The `sessions` columns the platform reads and writes (it depends on this shape, not on the database).
 * Prepared statements rather than Kysely: they run synchronously inside socket events, so the row says
 * "linked" before the `open` event that announces it leaves. A write may carry the events that report
 * it (connection-status), appended to the event log in its transaction.
 */
export function createSessionLinks (sqlite: SQLite.Database) {
  type Row = { id: string, auth_method: SessionTable['auth_method'], phone_number: string | null }
  const list = sqlite.prepare<[], Row>('SELECT id, auth_method, phone_number FROM sessions ORDER BY created_at, id')
  const get = sqlite.prepare<[string], Row>('SELECT id, auth_method, phone_number FROM sessions WHERE id = ?')
  const linked = sqlite.prepare<[string | null, string | null, string]>('UPDATE sessions SET own_number = ?, own_lid = ?, linked = 1 WHERE id = ?')
  const unlinked = sqlite.prepare<[string]>('UPDATE sessions SET own_number = NULL, own_lid = NULL, linked = 0 WHERE id = ?')
  const log = sqliteEventLog(sqlite)
  /** the row's write, with the events reporting it in the same transaction when there are any */
  const withEvents = (write: () => unknown, events: NewEvent[]): void => {
    if (events.length === 0) write()
    else sqlite.transaction(() => { write(); log.append(events) })()
  }
  const toStored = (r: Row): StoredSession => ({ id: r.id, authMethod: r.auth_method, phoneNumber: r.phone_number })
  return {
    list: (): StoredSession[] => list.all().map(toStored),
    get: (id: string): StoredSession | undefined => {
      const row = get.get(id)
      return row === undefined ? undefined : toStored(row)
    },
    markLinked: (id: string, ownNumber: string | null, ownLid: string | null, events: NewEvent[] = []): void => {
      withEvents(() => linked.run(ownNumber, ownLid, id), events)
    },
    markUnlinked: (id: string, events: NewEvent[] = []): void => { withEvents(() => unlinked.run(id), events) }
  }
}

/** The same on PostgreSQL: asynchronous (the platform awaits each write before it announces the change). */
export function createPgSessionLinks (pool: pg.Pool) {
  type Row = { id: string, auth_method: SessionTable['auth_method'], phone_number: string | null }
  const toStored = (r: Row): StoredSession => ({ id: r.id, authMethod: r.auth_method, phoneNumber: r.phone_number })
  // one session's writes commit in the order they were made (a logout right after an open ends unlinked)
  const writes = writeOrder()
  /** the row's write, with the events reporting it in the same transaction (the log's lock last) when there are any */
  function inOrder (id: string, text: string, values: unknown[], events: NewEvent[]): Promise<void> {
    const write = async (): Promise<void> => {
      if (events.length === 0) await pool.query(text, values)
      else await inTransaction(pool, async (client) => { await client.query(text, values); await pgAppendEvents(client, events) })
    }
    return writes.run(id, write)
  }
  return {
    list: async (): Promise<StoredSession[]> =>
      (await pool.query<Row>('SELECT id, auth_method, phone_number FROM sessions ORDER BY created_at, id')).rows.map(toStored),
    get: async (id: string): Promise<StoredSession | undefined> => {
      const row = (await pool.query<Row>('SELECT id, auth_method, phone_number FROM sessions WHERE id = $1', [id])).rows[0]
      return row === undefined ? undefined : toStored(row)
    },
    markLinked: async (id: string, ownNumber: string | null, ownLid: string | null, events: NewEvent[] = []): Promise<void> => {
      await inOrder(id, 'UPDATE sessions SET own_number = $1, own_lid = $2, linked = 1 WHERE id = $3', [ownNumber, ownLid, id], events)
    },
    markUnlinked: async (id: string, events: NewEvent[] = []): Promise<void> => {
      await inOrder(id, 'UPDATE sessions SET own_number = NULL, own_lid = NULL, linked = 0 WHERE id = $1', [id], events)
    }
  }
}

/** The dialect's session links. */
export function sessionLinksFor (handle: DbHandle) {
  return handle.dialect === 'sqlite' ? createSessionLinks(handle.sqlite) : createPgSessionLinks(handle.pool)
}
