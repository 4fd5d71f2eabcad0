import type { Kysely } from 'kysely'
import type { Database, NewStatusRow, StatusRow } from '../database.js'
import type { NewEvent } from './events.js'

/** A status as the service keeps it (today the shape of its row): the port's own type, which plugins import (never the table's row type). */
export type StatusRecord = StatusRow

type Db = Kysely<Database>

/** The counts the statuses row keeps (migration 019's triggers): real viewers, standing reactions, replies. */
type KeptCounts = 'viewer_count' | 'reaction_count' | 'reply_count'

/** A status row without its stored message (which only a resumed send reads) and its kept counts. */
export type StatusInfo = Omit<StatusRecord, 'message_payload' | KeptCounts>

/** What the sent-statuses list shows of a status: its row less the session, the media file and the text style (issue 41: each column read costs). */
export type SentStatusRow = Omit<StatusInfo, 'session_id' | 'media_file' | 'background_color' | 'font'> & Pick<StatusRecord, KeptCounts>

export interface ExpiredStatus {
  id: number
  session_id: string
  media_file: string | null
}

export interface DeliveryRow { recipient: string, number: string | null, jid: string, delivered_at: number }

/** Statuses, a send's progress (its recipients chunk by chunk), their delivery receipts and the posts pacing counts. */
export interface StatusStore {
  insert: (row: NewStatusRow) => Promise<number>
  find: (sessionId: string, id: number) => Promise<StatusInfo | undefined>
  /** Statuses (sending, sent or partial) created at or after `since`, newest first, with their counts of real viewers, reactions and replies. */
  listSent: (sessionId: string, since: number) => Promise<SentStatusRow[]>
  /**
   * The JIDs that have the status (committed chunk by chunk), own number included: `confirmed` only those
   * the platform acknowledged, `all` also those whose chunk went out unacknowledged (what a revoke reaches).
   */
  recipients: (id: number, which?: 'all' | 'confirmed') => Promise<string[]>
  /** Rows a crash left `sending`, oldest first, with their stored message. */
  interrupted: () => Promise<StatusRecord[]>
  /** Records the recipients a send could not reach (no LID known for them); false when the row is gone. */
  setUnreachable: (id: number, numbers: string[]) => Promise<boolean>
  /** Ends a send: `sent`, or `partial` with why it stopped; false when the row is gone. */
  finish: (id: number, outcome: { state: 'sent' | 'partial', sentCount: number, error?: string }) => Promise<boolean>
  remove: (id: number) => Promise<boolean>
  /** Sets the platform's late rejection on the status sent under `messageId`; its id, or undefined when unknown. */
  setError: (sessionId: string, messageId: string, error: string) => Promise<number | undefined>
  /** The message of the status sent under `messageId` as it went out (its stored payload); null when there is none. */
  sentMessagePayload: (sessionId: string, messageId: string) => Promise<Uint8Array | null>
  /** Whether any status (of any session) or any schedule still refers to the media file. */
  mediaInUse: (filename: string) => Promise<boolean>
  /** Deletes every status created before `before` (viewers go with them by cascade); what was deleted. */
  deleteBefore: (before: number) => Promise<ExpiredStatus[]>
  /** A status's delivery receipts, first delivery per recipient (the viewer store writes them with the receipts). */
  deliveries: (statusId: number) => Promise<DeliveryRow[]>
  /** A session's posts since `since` (ms), oldest first: when each was made and how many recipients it had (pacing). */
  postsSince: (sessionId: string, since: number) => Promise<Array<{ created_at: number, contact_count: number }>>

  // A send's progress, written between two chunks: each resolves once committed, and answers false when
  // the status row is gone (deleted with its session meanwhile); nothing is written then.
  /** the built message, before the first chunk */
  savePayload: (id: number, bytes: Uint8Array) => Promise<boolean>
  /** a chunk the platform acknowledged, with the new sent_count and the events reporting it, in one transaction */
  commitChunk: (id: number, jids: string[], sentCount: number, events?: NewEvent[]) => Promise<boolean>
  /** a chunk about to go out, or written but not acknowledged before the link closed: they may have it */
  unconfirmed: (id: number, jids: string[]) => Promise<boolean>
  /** unconfirmed JIDs known not to have gone out after all (their chunk failed before it was written) */
  notSent: (id: number, jids: string[]) => Promise<void>
}

const INFO_COLUMNS = [
  'id', 'session_id', 'type', 'content', 'caption', 'message_id', 'state', 'created_at', 'contact_count', 'target_numbers',
  'sent_count', 'media_file', 'background_color', 'font', 'error', 'unreachable', 'audience', 'mentions'
] as const satisfies ReadonlyArray<keyof StatusInfo>

const LIST_COLUMNS = [
  'id', 'type', 'content', 'caption', 'message_id', 'state', 'created_at', 'contact_count', 'target_numbers',
  'sent_count', 'error', 'unreachable', 'audience', 'mentions', 'viewer_count', 'reaction_count', 'reply_count'
] as const satisfies ReadonlyArray<keyof SentStatusRow>

export const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/** A send's progress: each backend writes it its own way (src/db/sqlite/statuses.ts, src/db/postgres/statuses.ts). */
export type StatusProgress = Pick<StatusStore, 'savePayload' | 'commitChunk' | 'unconfirmed' | 'notSent'>

/** The statuses store: the queries both backends run the same, and the backend's `progress`. */
export function statusStore (db: Db, progress: StatusProgress): StatusStore {
  return { ...statusQueries(db), ...progress }
}

export function statusQueries (db: Db): Omit<StatusStore, keyof StatusProgress> {
  return {
    async insert (row) {
      const { id } = await db.insertInto('statuses').values(row).returning('id').executeTakeFirstOrThrow()
      return id
    },
    async find (sessionId, id) {
      return await db.selectFrom('statuses').select(INFO_COLUMNS).where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
    },
    async listSent (sessionId, since) {
      // the counts are columns kept where the rows are written (migration 019): the list's cost does not grow with reach
      return await db.selectFrom('statuses')
        .select(LIST_COLUMNS)
        .where('session_id', '=', sessionId)
        .where('created_at', '>=', since)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute()
    },
    async recipients (id, which = 'all') {
      let query = db.selectFrom('status_recipients').select('jid').where('status_id', '=', id)
      if (which === 'confirmed') query = query.where('confirmed', '=', 1)
      return (await query.execute()).map((r) => r.jid)
    },
    async interrupted () {
      return await db.selectFrom('statuses').selectAll().where('state', '=', 'sending').orderBy('id').execute()
    },
    async setUnreachable (id, numbers) {
      const result = await db.updateTable('statuses').set({ unreachable: numbers.join(',') }).where('id', '=', id).executeTakeFirst()
      return result.numUpdatedRows > 0n
    },
    async finish (id, outcome) {
      const result = await db.updateTable('statuses')
        .set({ state: outcome.state, sent_count: outcome.sentCount, ...(outcome.error !== undefined ? { error: outcome.error } : {}) })
        .where('id', '=', id)
        .executeTakeFirst()
      return result.numUpdatedRows > 0n
    },
    async remove (id) {
      const result = await db.deleteFrom('statuses').where('id', '=', id).executeTakeFirst()
      return result.numDeletedRows > 0n
    },
    async setError (sessionId, messageId, error) {
      const row = await db.updateTable('statuses').set({ error })
        .where('session_id', '=', sessionId).where('message_id', '=', messageId)
        .returning('id').executeTakeFirst()
      return row?.id
    },
    async sentMessagePayload (sessionId, messageId) {
      const row = await db.selectFrom('statuses').select('message_payload').where('session_id', '=', sessionId).where('message_id', '=', messageId).executeTakeFirst()
      return row?.message_payload ?? null
    },
    async mediaInUse (filename) {
      const row = await db.selectFrom('statuses').select('id').where('media_file', '=', filename).limit(1).executeTakeFirst()
      if (row !== undefined) return true
      // a scheduled status names it: kept while the schedule exists (issue 24)
      const scheduled = await db.selectFrom('schedules').select('id').where('media_file', '=', filename).limit(1).executeTakeFirst()
      return scheduled !== undefined
    },
    async deleteBefore (before) {
      return await db.deleteFrom('statuses').where('created_at', '<', before).returning(['id', 'session_id', 'media_file']).execute()
    },
    async deliveries (statusId) {
      return await db.selectFrom('status_deliveries').select(['recipient', 'number', 'jid', 'delivered_at']).where('status_id', '=', statusId).orderBy('delivered_at').execute()
    },
    async postsSince (sessionId, since) {
      return await db.selectFrom('statuses').select(['created_at', 'contact_count'])
        .where('session_id', '=', sessionId).where('created_at', '>', since).orderBy('created_at').execute()
    }
  }
}
