import type { FastifyBaseLogger } from 'fastify'
import type { ContactStatusRecord } from '../../src/db/stores/contact-statuses.js'
import type { ContactStatusAnswerStore } from '../../src/db/stores/contact-status-answers.js'
import { NotConnected } from '../../src/errors.js'
import type { Platform } from '../../src/platform/platform.js'
import { DEFAULT_LIKE_EMOJI, type ContactStatusLiked, type ContactStatusReplySent } from '../../schemas/contact-status-answers.js'
import type { ContactStatusView } from '../../schemas/contact-statuses.js'

// The account answering its contacts' statuses (issue 39): a like (POST/DELETE …/like) and replies
// (POST …/reply), sent through the platform (src/platform/contact-status-answers.ts) and recorded only once
// the platform acknowledged them: a refused one is never listed, and one sent but not recorded (a crash in
// between) is sent again by the next call, which is harmless (a reaction replaces the earlier one). The
// answers are listed with each status (`likedAt`, `likeEmoji`, `replies`).

export interface AnswerDeps {
  answers: ContactStatusAnswerStore
  platform: Platform
  log: FastifyBaseLogger
  /** the status, 404 when unknown or expired (service.ts) */
  requireStatus: (sessionId: string, statusId: string) => Promise<ContactStatusRecord>
  now: () => number
}

const iso = (ms: number): string => new Date(ms).toISOString()

/**
 * A like, reply or view needs the session connected, or linked and reconnecting by itself (the platform
 * ended its stream a moment ago): then it waits for the reconnect, as a post does. A stored session that
 * is not running here (yet) is not connected, as for a send.
 */
export function requireConnected (platform: Pick<Platform, 'reachable'>, sessionId: string): void {
  if (!platform.reachable(sessionId)) throw new NotConnected()
}

export function createContactStatusAnswers (deps: AnswerDeps) {
  const { answers } = deps

  async function sendLike (sessionId: string, statusId: string, emoji: string): Promise<ContactStatusLiked> {
    const row = await deps.requireStatus(sessionId, statusId)
    requireConnected(deps.platform, sessionId)
    const { messageId } = await deps.platform.likeContactStatus(sessionId, { statusId: row.messageId, poster: row.fromJid, emoji })
    const at = deps.now()
    if (emoji === '') await answers.clearLike(row.seq)
    else await answers.setLike(row.seq, { emoji, messageId, likedAt: at })
    deps.log.info({ sessionId, statusId: row.messageId, messageId, liked: emoji !== '' }, emoji === '' ? "contact's status like taken back" : "contact's status liked")
    return { id: row.messageId, likedAt: emoji === '' ? null : iso(at), likeEmoji: emoji === '' ? null : emoji, messageId }
  }

  return {
    /** POST …/like: the reaction to the status (default WA Web's 💚), sent again on every call */
    async like (sessionId: string, statusId: string, emoji?: string): Promise<ContactStatusLiked> {
      return await sendLike(sessionId, statusId, emoji ?? DEFAULT_LIKE_EMOJI)
    },

    /** DELETE …/like: the reaction with empty text, as WhatsApp takes a reaction back */
    async unlike (sessionId: string, statusId: string): Promise<ContactStatusLiked> {
      return await sendLike(sessionId, statusId, '')
    },

    /** POST …/reply: a 1:1 message to the poster quoting the status; recorded once acknowledged */
    async reply (sessionId: string, statusId: string, text: string): Promise<ContactStatusReplySent> {
      const row = await deps.requireStatus(sessionId, statusId)
      requireConnected(deps.platform, sessionId)
      const { messageId } = await deps.platform.replyToContactStatus(sessionId, {
        statusId: row.messageId,
        poster: row.fromJid,
        to: row.fromLid ?? row.fromJid,
        text,
        quoted: { type: row.type, text: row.text, caption: row.caption, mediaRef: row.mediaRef }
      })
      const at = deps.now()
      await answers.addReply(row.seq, { messageId, text, sentAt: at })
      deps.log.info({ sessionId, statusId: row.messageId, messageId }, "replied to a contact's status")
      return { id: row.messageId, messageId, sentAt: iso(at) }
    },

    /** the views with the account's answers filled in (each view's row at the same index) */
    async withAnswers (rows: ContactStatusRecord[], views: ContactStatusView[]): Promise<ContactStatusView[]> {
      const found = await answers.of(rows.map((r) => r.seq))
      return views.map((v, i) => {
        const a = found.get(rows[i].seq)
        if (a === undefined) return v
        return {
          ...v,
          likedAt: a.like === null ? null : iso(a.like.likedAt),
          likeEmoji: a.like?.emoji ?? null,
          replies: a.replies.map((r) => ({ messageId: r.messageId, text: r.text, sentAt: iso(r.sentAt) }))
        }
      })
    }
  }
}

export type ContactStatusAnswers = ReturnType<typeof createContactStatusAnswers>
