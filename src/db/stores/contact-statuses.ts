import type { Kysely } from 'kysely'
import type { ContactStatusRow, Database } from '../database.js'

/** A status a contact posted, as the session received it: the port's own type, which plugins import (never the table's row type). */
export type ContactStatusRecord = ContactStatusRow

// The statuses the session's contacts posted (migration 015, `contact_statuses`), kept 24 hours. The same
// queries on SQLite and PostgreSQL.

type Db = Kysely<Database>

type Optional = 'mentions_me' | 'group_jid' | 'group_subject'
/** a new row; the mention and group columns (migration 020) default to 0 / null */
export type NewContactStatus = Omit<ContactStatusRecord, 'seq' | 'session_id' | 'received_at' | 'viewed_at' | Optional> & Partial<Pick<ContactStatusRecord, Optional>>

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
      return await db.insertInto('contact_statuses')
        .values({ ...s, session_id: sessionId, received_at: now, viewed_at: null })
        .onConflict((oc) => oc.columns(['session_id', 'message_id']).doNothing())
        .returningAll()
        .executeTakeFirst()
    },

    async page (sessionId, q) {
      let query = db.selectFrom('contact_statuses').selectAll()
        .where('session_id', '=', sessionId).where('posted_at', '>=', q.since)
      if (q.before !== undefined) query = query.where('seq', '<', q.before)
      return await query.orderBy('seq', 'desc').limit(q.limit).execute()
    },

    async find (sessionId, messageId) {
      return await db.selectFrom('contact_statuses').selectAll().where('session_id', '=', sessionId).where('message_id', '=', messageId).executeTakeFirst()
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
