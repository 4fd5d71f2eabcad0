import type { Kysely } from 'kysely'
import type { Database, NewSessionRow, SessionRow } from '../database.js'

// Queries on `sessions` for the service (the platform keeps its own few in src/platform/session-rows.ts).

type Db = Kysely<Database>

export async function findSession (db: Db, sessionId: string): Promise<SessionRow | undefined> {
  return await db.selectFrom('sessions').selectAll().where('id', '=', sessionId).executeTakeFirst()
}

/** Every session, oldest first. */
export async function listSessions (db: Db): Promise<SessionRow[]> {
  return await db.selectFrom('sessions').selectAll().orderBy('created_at').orderBy('id').execute()
}

/** Inserts the session unless its id is taken; returns whether it was inserted. */
export async function insertSession (db: Db, row: NewSessionRow): Promise<boolean> {
  const result = await db.insertInto('sessions').values(row).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst()
  return result.numInsertedOrUpdatedRows !== 0n
}

/** Deletes the session; its statuses, viewers and auth state go with it by cascade. */
export async function deleteSession (db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', sessionId).execute()
}

export async function setPhoneNumber (db: Db, sessionId: string, phoneNumber: string): Promise<void> {
  await db.updateTable('sessions').set({ phone_number: phoneNumber }).where('id', '=', sessionId).execute()
}

/** Media files the session's statuses refer to, each once. */
export async function sessionMediaFiles (db: Db, sessionId: string): Promise<string[]> {
  const rows = await db.selectFrom('statuses').select('media_file').distinct()
    .where('session_id', '=', sessionId).where('media_file', 'is not', null).execute()
  return rows.flatMap((r) => r.media_file === null ? [] : [r.media_file])
}
