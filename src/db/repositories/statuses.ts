import type { Kysely } from 'kysely'
import type { Database, NewStatusRow, StatusRow } from '../database.js'

// Queries on `statuses`. Each takes `db` first so it runs the same on the root handle or inside a transaction.

type Db = Kysely<Database>

export interface SentStatusRow extends StatusRow {
  viewer_count: number
}

export async function insertStatus (db: Db, row: NewStatusRow): Promise<number> {
  const { id } = await db.insertInto('statuses').values(row).returning('id').executeTakeFirstOrThrow()
  return id
}

export async function markSent (db: Db, id: number, messageId: string, recipientJids: string[]): Promise<void> {
  await db.updateTable('statuses')
    .set({ state: 'sent', message_id: messageId, recipients: JSON.stringify(recipientJids) })
    .where('id', '=', id)
    .execute()
}

export async function deleteStatus (db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('statuses').where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}

export async function findStatus (db: Db, sessionId: string, id: number): Promise<StatusRow | undefined> {
  return await db.selectFrom('statuses').selectAll().where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
}

/** Sets the platform's late rejection on the status sent under `messageId`; returns its id, or undefined when unknown. */
export async function setStatusError (db: Db, sessionId: string, messageId: string, error: string): Promise<number | undefined> {
  const row = await db.updateTable('statuses')
    .set({ error })
    .where('session_id', '=', sessionId)
    .where('message_id', '=', messageId)
    .returning('id')
    .executeTakeFirst()
  return row?.id
}

/** Sent statuses created at or after `since`, newest first, with their count of real viewers. */
export async function listSent (db: Db, sessionId: string, since: number): Promise<SentStatusRow[]> {
  const rows = await db.selectFrom('statuses as s')
    .selectAll('s')
    .select((eb) => eb.selectFrom('viewers as v')
      .whereRef('v.status_id', '=', 's.id')
      .where('v.is_real', '=', 1)
      .select(eb.fn.countAll<number>().as('n'))
      .as('viewer_count'))
    .where('s.session_id', '=', sessionId)
    .where('s.state', '=', 'sent')
    .where('s.created_at', '>=', since)
    .orderBy('s.created_at', 'desc')
    .orderBy('s.id', 'desc')
    .execute()
  return rows.map((r) => ({ ...r, viewer_count: Number(r.viewer_count ?? 0) }))
}

/** Whether any status (of any session) still refers to the media file. */
export async function mediaInUse (db: Db, filename: string): Promise<boolean> {
  const row = await db.selectFrom('statuses').select('id').where('media_file', '=', filename).limit(1).executeTakeFirst()
  return row !== undefined
}

export interface ExpiredStatus {
  id: number
  session_id: string
  media_file: string | null
}

/**
 * Deletes every status created before `before` (viewers go with them by cascade) and returns what was
 * deleted, so the caller can remove media files and tell each session.
 */
export async function deleteStatusesBefore (db: Db, before: number): Promise<ExpiredStatus[]> {
  return await db.deleteFrom('statuses')
    .where('created_at', '<', before)
    .returning(['id', 'session_id', 'media_file'])
    .execute()
}
