import type { Kysely } from 'kysely'
import type { Database, NewStatusRow } from '../database.js'
import type { NewEvent } from './events.js'

type Db = Kysely<Database>

/** what a status posts */
export type StatusType = 'text' | 'image' | 'video' | 'audio' | 'url'
/** `sending` while chunks go out (or until an interrupted send resumes), `sent` once every recipient has it, `partial` when it stopped with some of them */
export type StatusState = 'sending' | 'sent' | 'partial'

/** A status as the service keeps it (without the stored message only a resumed send reads, and without its counts). */
export interface Status {
  id: number
  sessionId: string
  type: StatusType
  content: string
  caption: string
  /** the platform's message id (set before sending, so receipts that race the insert still match) */
  messageId: string
  state: StatusState
  createdAt: number
  contactCount: number
  /** the requested recipients (digits), comma-separated, as stored */
  targetNumbers: string
  /** recipients the platform acknowledged */
  sentCount: number
  /** the upload's file name (image, video, audio), null otherwise */
  mediaFile: string | null
  backgroundColor: string | null
  font: number | null
  /** the platform's late rejection, or why a partial send stopped; null when fine */
  error: string | null
  /** recipients (digits) not sent to, comma-separated; '' when none */
  unreachable: string
  /** the audience snapshot (JSON: schemas/audience.ts AudienceSnapshot); null: targetNumbers chose the recipients */
  audience: string | null
  /** the numbers (digits) the status mentions, comma-separated; '' when none */
  mentions: string
}

/** A status a crash left `sending`, with the message as built (null: it was not built yet). */
export interface InterruptedStatus extends Status {
  messagePayload: Uint8Array | null
}

/** A posted status with the counts kept with it (migration 019): real viewers, standing reactions, replies. */
export interface SentStatus extends Status {
  viewerCount: number
  reactionCount: number
  replyCount: number
}

/** A status to record (the row exists before the first stanza goes out). */
export type NewStatus = Omit<Status, 'id' | 'sentCount' | 'unreachable' | 'audience' | 'mentions'> & Partial<Pick<Status, 'audience' | 'mentions'>>

/** A status removed by expiry. */
export interface ExpiredStatus {
  id: number
  sessionId: string
  mediaFile: string | null
}

/** A status's first delivery receipt from one recipient. */
export interface Delivery { recipient: string, number: string | null, jid: string, deliveredAt: number }

/** A post pacing counts: when it was made, how many recipients it had. */
export interface Post { createdAt: number, contactCount: number }

/** Statuses, a send's progress (its recipients chunk by chunk), their delivery receipts and the posts pacing counts. */
export interface StatusStore {
  insert: (status: NewStatus) => Promise<number>
  find: (sessionId: string, id: number) => Promise<Status | undefined>
  /** Statuses (sending, sent or partial) created at or after `since`, newest first, with their counts of real viewers, reactions and replies. */
  listSent: (sessionId: string, since: number) => Promise<SentStatus[]>
  /**
   * The JIDs that have the status (committed chunk by chunk), own number included: `confirmed` only those
   * the platform acknowledged, `all` also those whose chunk went out unacknowledged (what a revoke reaches).
   */
  recipients: (id: number, which?: 'all' | 'confirmed') => Promise<string[]>
  /** Rows a crash left `sending`, oldest first, with their stored message. */
  interrupted: () => Promise<InterruptedStatus[]>
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
  deliveries: (statusId: number) => Promise<Delivery[]>
  /** A session's posts since `since` (ms), oldest first: when each was made and how many recipients it had (pacing). */
  postsSince: (sessionId: string, since: number) => Promise<Post[]>

  // A send's progress, written between two chunks: each resolves once committed, and answers false when
  // the status row is gone (deleted with its session meanwhile); nothing is written then.
  /** the built message, before the first chunk */
  savePayload: (id: number, bytes: Uint8Array) => Promise<boolean>
  /** a chunk the platform acknowledged, with the new sent count and the events reporting it, in one transaction */
  commitChunk: (id: number, jids: string[], sentCount: number, events?: NewEvent[]) => Promise<boolean>
  /** a chunk about to go out, or written but not acknowledged before the link closed: they may have it */
  unconfirmed: (id: number, jids: string[]) => Promise<boolean>
  /** unconfirmed JIDs known not to have gone out after all (their chunk failed before it was written) */
  notSent: (id: number, jids: string[]) => Promise<void>
}

// Row ↔ record, once for both backends: the reads name each column as the record's field (`session_id as
// sessionId`), so rows come out as records with no mapping pass; the one write maps in toStatusRow.

/** the status's columns as its record's fields */
const STATUS_FIELDS = [
  'id', 'session_id as sessionId', 'type', 'content', 'caption', 'message_id as messageId', 'state', 'created_at as createdAt',
  'contact_count as contactCount', 'target_numbers as targetNumbers', 'sent_count as sentCount', 'media_file as mediaFile',
  'background_color as backgroundColor', 'font', 'error', 'unreachable', 'audience', 'mentions'
] as const

const SENT_FIELDS = [...STATUS_FIELDS, 'viewer_count as viewerCount', 'reaction_count as reactionCount', 'reply_count as replyCount'] as const

/** a new status as its row */
export function toStatusRow (s: NewStatus): NewStatusRow {
  return {
    session_id: s.sessionId,
    type: s.type,
    content: s.content,
    caption: s.caption,
    message_id: s.messageId,
    state: s.state,
    created_at: s.createdAt,
    contact_count: s.contactCount,
    target_numbers: s.targetNumbers,
    media_file: s.mediaFile,
    background_color: s.backgroundColor,
    font: s.font,
    error: s.error,
    ...(s.audience !== undefined ? { audience: s.audience } : {}),
    ...(s.mentions !== undefined ? { mentions: s.mentions } : {})
  }
}

export const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

/** A send's progress: each backend writes it its own way (src/db/sqlite/statuses.ts, src/db/postgres/statuses.ts). */
export type StatusProgress = Pick<StatusStore, 'savePayload' | 'commitChunk' | 'unconfirmed' | 'notSent'>

/** The statuses store: the queries both backends run the same, and the backend's `progress`. */
export function statusStore (db: Db, progress: StatusProgress): StatusStore {
  return { ...statusQueries(db), ...progress }
}

export function statusQueries (db: Db): Omit<StatusStore, keyof StatusProgress> {
  return {
    async insert (status) {
      const { id } = await db.insertInto('statuses').values(toStatusRow(status)).returning('id').executeTakeFirstOrThrow()
      return id
    },
    async find (sessionId, id) {
      return await db.selectFrom('statuses').select(STATUS_FIELDS).where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
    },
    async listSent (sessionId, since) {
      // the counts are columns kept where the rows are written (migration 019): the list's cost does not grow with reach
      return await db.selectFrom('statuses')
        .select(SENT_FIELDS)
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
      return await db.selectFrom('statuses').select([...STATUS_FIELDS, 'message_payload as messagePayload']).where('state', '=', 'sending').orderBy('id').execute()
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
      return await db.deleteFrom('statuses').where('created_at', '<', before).returning(['id', 'session_id as sessionId', 'media_file as mediaFile']).execute()
    },
    async deliveries (statusId) {
      return await db.selectFrom('status_deliveries').select(['recipient', 'number', 'jid', 'delivered_at as deliveredAt']).where('status_id', '=', statusId).orderBy('delivered_at').execute()
    },
    async postsSince (sessionId, since) {
      return await db.selectFrom('statuses').select(['created_at as createdAt', 'contact_count as contactCount'])
        .where('session_id', '=', sessionId).where('created_at', '>', since).orderBy('created_at').execute()
    }
  }
}
