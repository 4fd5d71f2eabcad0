import type pg from 'pg'
import type { DbHandle } from '../connection.js'
import { pgAppendEvents, type NewEvent } from './events.js'
import { inTransaction } from './pg-tx.js'
import { progressWriter } from './statuses.js'

/**
 * progressWriter's PostgreSQL twin (same statements, same answers), asynchronous: each resolves once
 * committed, and the send awaits it between two chunks as it does on SQLite.
 */
export function pgProgressWriter (pool: pg.Pool) {
  return {
    savePayload: async (id: number, bytes: Uint8Array): Promise<boolean> =>
      ((await pool.query("update statuses set message_payload = $1 where id = $2 and state = 'sending'",
        [Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), id])).rowCount ?? 0) > 0,
    /** a chunk the platform acknowledged, with the new sent_count and the events reporting it (the log's lock last) */
    commit: async (id: number, jids: string[], sentCount: number, events: NewEvent[] = []): Promise<boolean> => await inTransaction(pool, async (client) => {
      if (((await client.query('update statuses set sent_count = $1 where id = $2', [sentCount, id])).rowCount ?? 0) === 0) return false
      await client.query(
        `insert into status_recipients (status_id, jid, confirmed) select $1, j, 1 from unnest($2::text[]) as j
         on conflict (status_id, jid) do update set confirmed = 1`, [id, [...new Set(jids)]])
      await pgAppendEvents(client, events)
      return true
    }),
    /** a chunk about to go out, or written but not acknowledged before the link closed: they may have it */
    unconfirmed: async (id: number, jids: string[]): Promise<boolean> => await inTransaction(pool, async (client) => {
      if ((await client.query('select 1 from statuses where id = $1', [id])).rowCount === 0) return false
      await client.query('insert into status_recipients (status_id, jid, confirmed) select $1, j, 0 from unnest($2::text[]) as j on conflict do nothing', [id, jids])
      return true
    }),
    /** unconfirmed JIDs known not to have gone out after all (their chunk failed before it was written) */
    notSent: async (id: number, jids: string[]): Promise<void> => {
      await pool.query('delete from status_recipients where status_id = $1 and jid = any($2::text[]) and confirmed = 0', [id, jids])
    }
  }
}

/** The dialect's send progress writer (SQLite: synchronous; PostgreSQL: promises). */
export function progressWriterFor (handle: DbHandle): ReturnType<typeof progressWriter> | ReturnType<typeof pgProgressWriter> {
  return handle.dialect === 'sqlite' ? progressWriter(handle.sqlite) : pgProgressWriter(handle.pool)
}
