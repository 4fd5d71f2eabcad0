import type { Kysely } from 'kysely'
import type { Database } from '../database.js'

// The account's own answers to its contacts' statuses (migration 021): its like of each and its replies.
// Both hang off the status' row (`contact_statuses.seq`, cascade), so they expire with it. The same queries on
// SQLite and PostgreSQL.

type Db = Kysely<Database>

export interface StatusLike { emoji: string, messageId: string, likedAt: number }
export interface StatusReply { messageId: string, text: string, sentAt: number }
export interface StatusAnswers { like: StatusLike | null, replies: StatusReply[] }

export interface ContactStatusAnswerStore {
  /** the like went out: replaces an earlier one (a status has one like at a time, as a reaction does) */
  setLike: (statusSeq: number, like: StatusLike) => Promise<void>
  /** the like was taken back */
  clearLike: (statusSeq: number) => Promise<void>
  /** a reply the platform acknowledged */
  addReply: (statusSeq: number, reply: StatusReply) => Promise<void>
  /** the answers of these statuses (by their seq), oldest reply first; a status without any is absent */
  of: (statusSeqs: number[]) => Promise<Map<number, StatusAnswers>>
}

export function contactStatusAnswerStore (db: Db): ContactStatusAnswerStore {
  return {
    async setLike (statusSeq, like) {
      await db.insertInto('contact_status_likes')
        .values({ status_seq: statusSeq, emoji: like.emoji, message_id: like.messageId, liked_at: like.likedAt })
        .onConflict((oc) => oc.column('status_seq').doUpdateSet({ emoji: like.emoji, message_id: like.messageId, liked_at: like.likedAt }))
        .execute()
    },

    async clearLike (statusSeq) {
      await db.deleteFrom('contact_status_likes').where('status_seq', '=', statusSeq).execute()
    },

    async addReply (statusSeq, reply) {
      await db.insertInto('contact_status_replies')
        .values({ status_seq: statusSeq, message_id: reply.messageId, text: reply.text, sent_at: reply.sentAt })
        .execute()
    },

    async of (statusSeqs) {
      const out = new Map<number, StatusAnswers>()
      if (statusSeqs.length === 0) return out
      const entry = (seq: number): StatusAnswers => {
        let a = out.get(seq)
        if (a === undefined) { a = { like: null, replies: [] }; out.set(seq, a) }
        return a
      }
      const likes = await db.selectFrom('contact_status_likes').selectAll().where('status_seq', 'in', statusSeqs).execute()
      for (const l of likes) entry(Number(l.status_seq)).like = { emoji: l.emoji, messageId: l.message_id, likedAt: Number(l.liked_at) }
      const replies = await db.selectFrom('contact_status_replies').selectAll().where('status_seq', 'in', statusSeqs).orderBy('seq').execute()
      for (const r of replies) entry(Number(r.status_seq)).replies.push({ messageId: r.message_id, text: r.text, sentAt: Number(r.sent_at) })
      return out
    }
  }
}
