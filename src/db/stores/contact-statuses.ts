import type { Kysely } from 'kysely'
import type { ContactStatusRow, Database } from '../database.js'

// The statuses the session's contacts posted (migration 015, `contact_statuses`), kept 24 hours. The same
// queries on SQLite and PostgreSQL.

type Db = Kysely<Database>

/** A status a contact posted, as the platform delivered it (a new one: what the intake records). */
export interface NewContactStatus {
  /** the platform's message id */
  messageId: string
  /** `<lid>@lid` or `<number>@s.whatsapp.net`, as the platform named the poster */
  fromJid: string
  fromLid: string | null
  /** digits; null while a LID is not mapped */
  fromNumber: string | null
  /** text, image, video, audio, other, undecryptable */
  type: string
  text: string | null
  caption: string | null
  mimetype: string | null
  size: number | null
  /** what downloading the media takes (JSON; holds its key: never sent out) */
  mediaRef: string | null
  /** why it could not be read */
  error: string | null
  postedAt: number
  /** the status mentions the account (false when not given) */
  mentionsMe?: boolean
  /** a group status' group (`…@g.us`) and its subject when known */
  groupJid?: string | null
  groupSubject?: string | null
}

/** A contact's status as the session keeps it. */
export interface ContactStatusRecord extends Required<NewContactStatus> {
  /** arrival order (the list's cursor, newest first) */
  seq: number
  sessionId: string
  receivedAt: number
  /** when the read receipt was sent; null: never */
  viewedAt: number | null
}

/** row → record, for every read */
export function toContactStatusRecord (r: ContactStatusRow): ContactStatusRecord {
  return {
    seq: r.seq,
    sessionId: r.session_id,
    messageId: r.message_id,
    fromJid: r.from_jid,
    fromLid: r.from_lid,
    fromNumber: r.from_number,
    type: r.type,
    text: r.text,
    caption: r.caption,
    mimetype: r.mimetype,
    size: r.size,
    mediaRef: r.media_ref,
    error: r.error,
    postedAt: r.posted_at,
    receivedAt: r.received_at,
    viewedAt: r.viewed_at,
    mentionsMe: r.mentions_me === 1,
    groupJid: r.group_jid,
    groupSubject: r.group_subject
  }
}

export interface ContactStatusStore {
  /**
   * Records a contact's status; the row when it is new, undefined when the message id was recorded before (a
   * redelivery: the row as first read stays, even when this copy could not be decrypted). In a unit of work
   * (`tx.contactStatuses`) the row and its event commit together.
   */
  record: (sessionId: string, status: NewContactStatus, now: number) => Promise<ContactStatusRecord | undefined>
  /** one page, newest first: `limit` rows that arrived before the row `before` (its seq; undefined: from the newest), posted since `since` */
  page: (sessionId: string, q: { limit: number, before: number | undefined, since: number }) => Promise<ContactStatusRecord[]>
  find: (sessionId: string, messageId: string) => Promise<ContactStatusRecord | undefined>
  /** the read receipt went out: the first time is kept */
  markViewed: (sessionId: string, messageId: string, at: number) => Promise<void>
  /** removes contacts' statuses posted before `cutoff` (every session); how many per session */
  expire: (cutoff: number) => Promise<Map<string, number>>
}

export function contactStatusStore (db: Db): ContactStatusStore {
  return {
    async record (sessionId, s, now) {
      const row = await db.insertInto('contact_statuses')
        .values({
          session_id: sessionId,
          message_id: s.messageId,
          from_jid: s.fromJid,
          from_lid: s.fromLid,
          from_number: s.fromNumber,
          type: s.type,
          text: s.text,
          caption: s.caption,
          mimetype: s.mimetype,
          size: s.size,
          media_ref: s.mediaRef,
          error: s.error,
          posted_at: s.postedAt,
          received_at: now,
          viewed_at: null,
          mentions_me: s.mentionsMe === true ? 1 : 0,
          group_jid: s.groupJid ?? null,
          group_subject: s.groupSubject ?? null
        })
        .onConflict((oc) => oc.columns(['session_id', 'message_id']).doNothing())
        .returningAll()
        .executeTakeFirst()
      return row === undefined ? undefined : toContactStatusRecord(row)
    },

    async page (sessionId, q) {
      let query = db.selectFrom('contact_statuses').selectAll()
        .where('session_id', '=', sessionId).where('posted_at', '>=', q.since)
      if (q.before !== undefined) query = query.where('seq', '<', q.before)
      return (await query.orderBy('seq', 'desc').limit(q.limit).execute()).map(toContactStatusRecord)
    },

    async find (sessionId, messageId) {
      const row = await db.selectFrom('contact_statuses').selectAll().where('session_id', '=', sessionId).where('message_id', '=', messageId).executeTakeFirst()
      return row === undefined ? undefined : toContactStatusRecord(row)
    },

    async markViewed (sessionId, messageId, at) {
      await db.updateTable('contact_statuses').set({ viewed_at: at })
        .where('session_id', '=', sessionId).where('message_id', '=', messageId).where('viewed_at', 'is', null)
        .execute()
    },

    async expire (cutoff) {
      const rows = await db.deleteFrom('contact_statuses').where('posted_at', '<', cutoff).returning('session_id').execute()
      const counts = new Map<string, number>()
      for (const r of rows) counts.set(r.session_id, (counts.get(r.session_id) ?? 0) + 1)
      return counts
    }
  }
}
