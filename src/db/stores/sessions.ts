import type { Kysely } from 'kysely'
import type { Database, SessionRow } from '../database.js'
import type { AppendEvents, NewEvent } from './events.js'
import { writeOrder } from '../write-order.js'

type Db = Kysely<Database>

/** How a session links its account: a pairing code typed on the phone, or a QR code scanned. */
export type SessionAuthMethod = 'pairing' | 'qrcode'

/** A session as stored: its id, name, how it links, and the account it is linked to (the port's own type; plugins never see the table's row). */
export interface Session {
  id: string
  name: string
  authMethod: SessionAuthMethod
  /** the number a pairing code is asked for (null: QR code) */
  phoneNumber: string | null
  /** digits of the linked account; kept while unlinked so the UI can show who it was */
  ownNumber: string | null
  ownLid: string | null
  /** the platform accepted the link (creds registered); false again after logout */
  linked: boolean
  /** milliseconds since the epoch */
  createdAt: number
}

/** A session to create: not linked yet. */
export type NewSession = Pick<Session, 'id' | 'name' | 'authMethod' | 'phoneNumber' | 'createdAt'>

/** What the platform reads of a session to start it. */
export interface StoredSession { id: string, authMethod: SessionAuthMethod, phoneNumber: string | null }

/** The one row → Session mapping, for both backends. */
export function toSession (row: SessionRow): Session {
  return {
    id: row.id,
    name: row.name,
    authMethod: row.auth_method,
    phoneNumber: row.phone_number,
    ownNumber: row.own_number,
    ownLid: row.own_lid,
    linked: row.linked !== 0,
    createdAt: row.created_at
  }
}

/**
 * Sessions and their links: the rows the service creates, lists and deletes, and the columns the platform
 * writes when an account links or logs out. A link write may carry the events that report it
 * (connection-status), appended to the event log in its transaction.
 */
export interface SessionStore {
  find: (sessionId: string) => Promise<Session | undefined>
  /** every session, oldest first */
  list: () => Promise<Session[]>
  /** inserts the session unless its id is taken; whether it was inserted */
  insert: (session: NewSession) => Promise<boolean>
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
async function insertSession (db: Db, s: NewSession): Promise<boolean> {
  const row = { id: s.id, name: s.name, auth_method: s.authMethod, phone_number: s.phoneNumber, own_number: null, own_lid: null, created_at: s.createdAt }
  const result = await db.insertInto('sessions').values(row).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst()
  return result.numInsertedOrUpdatedRows !== 0n
}

async function deleteSession (db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', sessionId).execute()
}

/** The queries both backends run the same; `append` is the backend's (stores/events.ts). SQLite replaces the link writes (src/db/sqlite/sessions.ts). */
export function sessionStore (db: Db, append: AppendEvents): SessionStore {
  const writes = writeOrder()
  const toStored = (r: Pick<SessionRow, 'id' | 'auth_method' | 'phone_number'>): StoredSession => ({ id: r.id, authMethod: r.auth_method, phoneNumber: r.phone_number })
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
    find: async (sessionId) => {
      const row = await db.selectFrom('sessions').selectAll().where('id', '=', sessionId).executeTakeFirst()
      return row === undefined ? undefined : toSession(row)
    },
    list: async () => (await db.selectFrom('sessions').selectAll().orderBy('created_at').orderBy('id').execute()).map(toSession),
    insert: async (session) => await insertSession(db, session),
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
