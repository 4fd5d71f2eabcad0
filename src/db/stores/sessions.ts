import type { Kysely } from 'kysely'
import type { Database, NewSessionRow, SessionRow, SessionTable } from '../database.js'
import type { AppendEvents, NewEvent } from './events.js'
import { writeOrder } from '../write-order.js'

/** A session as stored: its id, name, how it links, and the account it is linked to: the port's own type, which plugins import (never the table's row type). */
export type SessionRecord = SessionRow

type Db = Kysely<Database>

/** What the platform reads of a session to start it. */
export interface StoredSession { id: string, authMethod: SessionTable['auth_method'], phoneNumber: string | null }

/**
 * Sessions and their links: the rows the service creates, lists and deletes, and the columns the platform
 * writes when an account links or logs out. A link write may carry the events that report it
 * (connection-status), appended to the event log in its transaction.
 */
export interface SessionStore {
  find: (sessionId: string) => Promise<SessionRecord | undefined>
  /** every session, oldest first */
  list: () => Promise<SessionRecord[]>
  /** inserts the session unless its id is taken; whether it was inserted */
  insert: (row: NewSessionRow) => Promise<boolean>
  /** deletes the session; its statuses, viewers and auth state go with it by cascade */
  remove: (sessionId: string) => Promise<void>
  setPhoneNumber: (sessionId: string, phoneNumber: string) => Promise<void>
  /** media files the session's statuses refer to, each once */
  mediaFiles: (sessionId: string) => Promise<string[]>
  /** every session as the platform starts it, oldest first */
  stored: () => Promise<StoredSession[]>
  storedOne: (sessionId: string) => Promise<StoredSession | undefined>
  /**
   * The account linked (a socket opened); `events` are appended in the write's transaction. One session's
   * link writes commit in the order they were made (a logout right after an open ends unlinked).
   */
  markLinked: (sessionId: string, ownNumber: string | null, ownLid: string | null, events?: NewEvent[]) => Promise<void>
  /** the account logged out; as markLinked */
  markUnlinked: (sessionId: string, events?: NewEvent[]) => Promise<void>
}

/** Inserts the session unless its id is taken; whether it was inserted. */
async function insertSession (db: Db, row: NewSessionRow): Promise<boolean> {
  const result = await db.insertInto('sessions').values(row).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst()
  return result.numInsertedOrUpdatedRows !== 0n
}

async function deleteSession (db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', sessionId).execute()
}

/** The queries both backends run the same; `append` is the backend's (stores/events.ts). SQLite replaces the link writes (src/db/sqlite/sessions.ts). */
export function sessionStore (db: Db, append: AppendEvents): SessionStore {
  const writes = writeOrder()
  const toStored = (r: Pick<SessionRecord, 'id' | 'auth_method' | 'phone_number'>): StoredSession => ({ id: r.id, authMethod: r.auth_method, phoneNumber: r.phone_number })
  /** the row's write, after the session's earlier ones, with the events reporting it in the same transaction */
  const link = async (sessionId: string, set: { own_number: string | null, own_lid: string | null, linked: number }, events: NewEvent[]): Promise<void> => {
    await writes.run(sessionId, async () => {
      const update = async (q: Db): Promise<void> => { await q.updateTable('sessions').set(set).where('id', '=', sessionId).execute() }
      if (events.length === 0) await update(db)
      // the log's rows last: on PostgreSQL its lock is held only for the insert and the commit
      else await db.transaction().execute(async (trx) => { await update(trx); await append(trx, events) })
    })
  }
  return {
    find: async (sessionId) => await db.selectFrom('sessions').selectAll().where('id', '=', sessionId).executeTakeFirst(),
    list: async () => await db.selectFrom('sessions').selectAll().orderBy('created_at').orderBy('id').execute(),
    insert: async (row) => await insertSession(db, row),
    remove: async (sessionId) => { await deleteSession(db, sessionId) },
    setPhoneNumber: async (sessionId, phoneNumber) => {
      await db.updateTable('sessions').set({ phone_number: phoneNumber }).where('id', '=', sessionId).execute()
    },
    mediaFiles: async (sessionId) => {
      const rows = await db.selectFrom('statuses').select('media_file').distinct()
        .where('session_id', '=', sessionId).where('media_file', 'is not', null).execute()
      return rows.flatMap((r) => r.media_file === null ? [] : [r.media_file])
    },
    stored: async () => (await db.selectFrom('sessions').select(['id', 'auth_method', 'phone_number']).orderBy('created_at').orderBy('id').execute()).map(toStored),
    storedOne: async (sessionId) => {
      const row = await db.selectFrom('sessions').select(['id', 'auth_method', 'phone_number']).where('id', '=', sessionId).executeTakeFirst()
      return row === undefined ? undefined : toStored(row)
    },
    markLinked: async (sessionId, ownNumber, ownLid, events = []) => { await link(sessionId, { own_number: ownNumber, own_lid: ownLid, linked: 1 }, events) },
    markUnlinked: async (sessionId, events = []) => { await link(sessionId, { own_number: null, own_lid: null, linked: 0 }, events) }
  }
}
