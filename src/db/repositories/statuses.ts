import type SQLite from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database, NewStatusRow, StatusRow } from '../database.js'
import { sqliteEventLog, type NewEvent } from './events.js'

// Queries on `statuses`. Each takes `db` first so it runs the same on the root handle or inside a transaction.

type Db = Kysely<Database>

/** A status row without its stored message (which only a resumed send reads). */
export type StatusInfo = Omit<StatusRow, 'message_payload'>

export interface SentStatusRow extends StatusInfo {
  viewer_count: number
  reaction_count: number
  reply_count: number
}

const INFO_COLUMNS = [
  'id', 'session_id', 'type', 'content', 'caption', 'message_id', 'state', 'created_at', 'contact_count', 'target_numbers',
  'sent_count', 'media_file', 'background_color', 'font', 'error', 'unreachable', 'audience'
] as const satisfies ReadonlyArray<keyof StatusInfo>

export async function insertStatus (db: Db, row: NewStatusRow): Promise<number> {
  const { id } = await db.insertInto('statuses').values(row).returning('id').executeTakeFirstOrThrow()
  return id
}

/**
 * A send's progress, written synchronously (prepared statements on the raw connection) between two chunks:
 * the built message before the first one, then each acknowledged chunk's JIDs with the new count and its
 * events (status-send-progress, appended to the event log last), in one transaction. Each answers false
 * when the status row is gone (deleted with its session meanwhile); nothing is written then.
 */
export function progressWriter (sqlite: SQLite.Database) {
  const log = sqliteEventLog(sqlite)
  const payload = sqlite.prepare<[Buffer, number]>("update statuses set message_payload = ? where id = ? and state = 'sending'")
  const confirm = sqlite.prepare<[number, string]>(
    'insert into status_recipients (status_id, jid, confirmed) values (?, ?, 1) on conflict (status_id, jid) do update set confirmed = 1')
  const maybe = sqlite.prepare<[number, string]>('insert or ignore into status_recipients (status_id, jid, confirmed) values (?, ?, 0)')
  const count = sqlite.prepare<[number, number]>('update statuses set sent_count = ? where id = ?')
  const exists = sqlite.prepare<[number]>('select 1 from statuses where id = ?').pluck()
  const commit = sqlite.transaction((id: number, jids: string[], sentCount: number, events: NewEvent[]): boolean => {
    if (count.run(sentCount, id).changes === 0) return false
    for (const jid of jids) confirm.run(id, jid)
    log.append(events)
    return true
  })
  const unconfirmed = sqlite.transaction((id: number, jids: string[]): boolean => {
    if (exists.get(id) === undefined) return false
    for (const jid of jids) maybe.run(id, jid)
    return true
  })
  const forget = sqlite.prepare<[number, string]>('delete from status_recipients where status_id = ? and jid = ? and confirmed = 0')
  const notSent = sqlite.transaction((id: number, jids: string[]): void => { for (const jid of jids) forget.run(id, jid) })
  return {
    savePayload: (id: number, bytes: Uint8Array): boolean => payload.run(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), id).changes > 0,
    /** a chunk the platform acknowledged, with the new sent_count and the events reporting it */
    commit: (id: number, jids: string[], sentCount: number, events: NewEvent[] = []): boolean => commit(id, jids, sentCount, events),
    /** a chunk about to go out, or written but not acknowledged before the link closed: they may have it */
    unconfirmed: (id: number, jids: string[]): boolean => unconfirmed(id, jids),
    /** unconfirmed JIDs known not to have gone out after all (their chunk failed before it was written) */
    notSent: (id: number, jids: string[]): void => { notSent(id, jids) }
  }
}

/** Records the recipients a send could not reach (no LID known for them); false when the row is gone. */
export async function setUnreachable (db: Db, id: number, numbers: string[]): Promise<boolean> {
  const result = await db.updateTable('statuses').set({ unreachable: numbers.join(',') }).where('id', '=', id).executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/** Ends a send: `sent`, or `partial` with why it stopped; false when the row is gone. */
export async function finishSend (db: Db, id: number, outcome: { state: 'sent' | 'partial', sentCount: number, error?: string }): Promise<boolean> {
  const result = await db.updateTable('statuses')
    .set({ state: outcome.state, sent_count: outcome.sentCount, ...(outcome.error !== undefined ? { error: outcome.error } : {}) })
    .where('id', '=', id)
    .executeTakeFirst()
  return result.numUpdatedRows > 0n
}

/**
 * The JIDs that have the status (committed chunk by chunk), own number included: `confirmed` only those
 * the platform acknowledged, `all` also those whose chunk went out unacknowledged (what a revoke reaches).
 */
export async function statusRecipients (db: Db, id: number, which: 'all' | 'confirmed' = 'all'): Promise<string[]> {
  let query = db.selectFrom('status_recipients').select('jid').where('status_id', '=', id)
  if (which === 'confirmed') query = query.where('confirmed', '=', 1)
  return (await query.execute()).map((r) => r.jid)
}

/** Rows a crash left `sending`, oldest first, with their stored message. */
export async function interruptedSends (db: Db): Promise<StatusRow[]> {
  return await db.selectFrom('statuses').selectAll().where('state', '=', 'sending').orderBy('id').execute()
}

export async function deleteStatus (db: Db, id: number): Promise<boolean> {
  const result = await db.deleteFrom('statuses').where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}

export async function findStatus (db: Db, sessionId: string, id: number): Promise<StatusInfo | undefined> {
  return await db.selectFrom('statuses').select(INFO_COLUMNS).where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
}

/** The message of the status sent under `messageId` as it went out (its stored payload); null when there is none. */
export async function sentMessagePayload (db: Db, sessionId: string, messageId: string): Promise<Uint8Array | null> {
  const row = await db.selectFrom('statuses').select('message_payload').where('session_id', '=', sessionId).where('message_id', '=', messageId).executeTakeFirst()
  return row?.message_payload ?? null
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

/** Statuses (sending, sent or partial) created at or after `since`, newest first, with their count of real viewers. */
export async function listSent (db: Db, sessionId: string, since: number): Promise<SentStatusRow[]> {
  const rows = await db.selectFrom('statuses as s')
    .select(INFO_COLUMNS.map((c) => `s.${c}` as const))
    .select((eb) => eb.selectFrom('viewers as v')
      .whereRef('v.status_id', '=', 's.id')
      .where('v.is_real', '=', 1)
      .select(eb.fn.countAll<number>().as('n'))
      .as('viewer_count'))
    .select((eb) => eb.selectFrom('status_reactions as r').whereRef('r.status_id', '=', 's.id').where('r.emoji', '<>', '')
      .select(eb.fn.countAll<number>().as('n')).as('reaction_count'))
    .select((eb) => eb.selectFrom('status_replies as p').whereRef('p.status_id', '=', 's.id')
      .select(eb.fn.countAll<number>().as('n')).as('reply_count'))
    .where('s.session_id', '=', sessionId)
    .where('s.created_at', '>=', since)
    .orderBy('s.created_at', 'desc')
    .orderBy('s.id', 'desc')
    .execute()
  return rows.map((r) => ({
    ...r, viewer_count: Number(r.viewer_count ?? 0), reaction_count: Number(r.reaction_count ?? 0), reply_count: Number(r.reply_count ?? 0)
  }))
}

/** Whether any status (of any session) or any schedule still refers to the media file. */
export async function mediaInUse (db: Db, filename: string): Promise<boolean> {
  const row = await db.selectFrom('statuses').select('id').where('media_file', '=', filename).limit(1).executeTakeFirst()
  if (row !== undefined) return true
  // a scheduled status names it: kept while the schedule exists (issue 24)
  const scheduled = await db.selectFrom('schedules').select('id').where('media_file', '=', filename).limit(1).executeTakeFirst()
  return scheduled !== undefined
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
