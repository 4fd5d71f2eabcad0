import type { Readable } from 'node:stream'
import type { FastifyBaseLogger } from 'fastify'
import type { ContactStatusRecord } from '../../src/db/stores/contact-statuses.js'
import type { ContactStatusStore } from '../../src/db/stores/contact-statuses.js'
import type { ContactStatusAnswerStore } from '../../src/db/stores/contact-status-answers.js'
import { NoStatusMedia, NotConnected, SessionNotFound, StatusMediaFailed, StatusNotFound } from '../../src/errors.js'
import { pageOf, pageRead } from '../../src/paging.js'
import { pnJid } from '../../src/jid.js'
import type { ContactStatus, ContactStatusSink, Platform } from '../../src/platform/platform.js'
import type { ContactStatusesQuery, ContactStatusPage, ContactStatusView } from '../../schemas/contact-statuses.js'
import { NO_ANSWERS } from '../../schemas/contact-status-answers.js'
import { createContactStatusAnswers } from './answers.js'
import type { DomainEvents } from '../broadcaster/domain-events.js'

// Contacts' statuses (issue 30): the platform hands each one over through the sink before it acks its `<status>`
// stanza; it is committed here with its `contact-status` event (one transaction: the event log). The routes read
// them (the last 24 hours, newest first), stream a status' media only when asked, and send the read receipt only
// when asked: the account's owner decides who learns they looked.

export interface ContactStatusDeps {
  contactStatuses: ContactStatusStore
  /** the account's likes of and replies to them (answers.ts) */
  answers: ContactStatusAnswerStore
  /** whether the session is known (404 otherwise) */
  sessionExists: (sessionId: string) => Promise<boolean>
  events: DomainEvents
  log: FastifyBaseLogger
  /** the platform (registered after this plugin, which it is created with the sink of) */
  platform: () => Platform
  statusTtlMs: number
  /** ALLOW_PRIVATE_URLS: media from any host the status names (tests' emulator); else only the platform's */
  anyMediaHost: boolean
  now?: () => number
}

const iso = (ms: number): string => new Date(ms).toISOString()

export function toContactStatus (r: ContactStatusRecord): ContactStatusView {
  return {
    id: r.message_id,
    number: r.from_number,
    lid: r.from_lid,
    jid: r.from_jid,
    type: r.type as ContactStatusView['type'],
    text: r.text,
    caption: r.caption,
    mediaType: r.mimetype,
    mediaSize: r.size,
    postedAt: iso(r.posted_at),
    receivedAt: iso(r.received_at),
    viewedAt: r.viewed_at === null ? null : iso(r.viewed_at),
    error: r.error,
    mentionsMe: r.mentions_me === 1,
    groupJid: r.group_jid,
    groupSubject: r.group_subject,
    ...NO_ANSWERS
  }
}

/** The platform's media hosts (`mmg.whatsapp.net` and its kin): the only ones a status' media is fetched from in production. */
const PLATFORM_MEDIA_HOST = /(^|\.)whatsapp\.net$/i
const DEFAULT_MEDIA_HOST = 'mmg.whatsapp.net'

export function createContactStatusService (deps: ContactStatusDeps) {
  const store = deps.contactStatuses
  const now = deps.now ?? Date.now
  const stats = { received: 0, redelivered: 0, undecryptable: 0 }
  let closed = false

  async function commit (sessionId: string, s: ContactStatus): Promise<void> {
    if (closed) throw new Error('contact statuses are closed')
    const row = await deps.events.within(async (tx, emit) => {
      const r = await tx.contactStatuses.record(sessionId, {
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
        mentions_me: s.mentionsMe ? 1 : 0,
        group_jid: s.groupJid,
        group_subject: s.groupSubject
      }, now())
      if (r !== undefined) {
        const status = toContactStatus(r)
        emit('contact-status', { sessionId, status })
        // issue 39: the contact named the account in it (committed with the row, before the platform is acked)
        if (status.mentionsMe) emit('contact-status-mention', { sessionId, status })
      }
      return r
    })
    if (row === undefined) stats.redelivered++
    else if (row.type === 'undecryptable') stats.undecryptable++
    else stats.received++
  }

  async function requireSession (sessionId: string): Promise<void> {
    if (!await deps.sessionExists(sessionId)) throw new SessionNotFound()
  }

  async function requireStatus (sessionId: string, statusId: string): Promise<ContactStatusRecord> {
    await requireSession(sessionId)
    const row = await store.find(sessionId, statusId)
    if (row === undefined || row.posted_at < now() - deps.statusTtlMs) throw new StatusNotFound()
    return row
  }

  const sink: ContactStatusSink = { commit }
  const answers = createContactStatusAnswers({ answers: deps.answers, platform: deps.platform, log: deps.log, requireStatus, now })

  return {
    sink,
    stats: (): Readonly<typeof stats> => ({ ...stats }),

    /** GET …/contact-statuses: one page, newest first, of the last 24 hours. */
    async list (sessionId: string, q: ContactStatusesQuery): Promise<ContactStatusPage> {
      await requireSession(sessionId)
      const { limit, fetch, after } = pageRead(q)
      const rows = await store.page(sessionId, { limit: fetch, before: after, since: now() - deps.statusTtlMs })
      const { page, nextCursor } = pageOf(rows, limit, (r) => r.seq)
      return { statuses: await answers.withAnswers(page, page.map(toContactStatus)), nextCursor }
    },

    async get (sessionId: string, statusId: string): Promise<ContactStatusView> {
      const row = await requireStatus(sessionId, statusId)
      return (await answers.withAnswers([row], [toContactStatus(row)]))[0]
    },

    /** like / unlike / reply (answers.ts) */
    answers,

    /**
     * POST …/view: the read receipt for it, once (a second call sends nothing). Recorded after it was written
     * to the platform: a receipt sent and not recorded is sent again by the next call, never lost.
     */
    async view (sessionId: string, statusId: string): Promise<{ id: string, viewedAt: string, sent: boolean }> {
      const row = await requireStatus(sessionId, statusId)
      if (row.viewed_at !== null) return { id: row.message_id, viewedAt: iso(row.viewed_at), sent: false }
      // a stored session that is not running here (yet) is not connected, as for a send
      if (deps.platform().snapshot(sessionId)?.connected !== true) throw new NotConnected()
      const participant = row.from_lid ?? row.from_jid
      await deps.platform().viewContactStatus(sessionId, {
        messageId: row.message_id,
        participant,
        participantPn: row.from_number === null ? null : pnJid(row.from_number)
      })
      const at = now()
      await store.markViewed(sessionId, row.message_id, at)
      deps.log.info({ sessionId, statusId: row.message_id }, "contact's status marked viewed")
      return { id: row.message_id, viewedAt: iso(at), sent: true }
    },

    /** GET …/media: the decrypted media, streamed from the platform's media server (nothing is kept). */
    async media (sessionId: string, statusId: string): Promise<{ stream: Readable, mimetype: string, size: number | null }> {
      const row = await requireStatus(sessionId, statusId)
      if (row.media_ref === null) throw new NoStatusMedia()
      const { url } = JSON.parse(row.media_ref) as { url: string | null }
      let named: string | undefined
      try { named = url === null ? undefined : new URL(url).host } catch { named = undefined }
      // the status names its media's address; only the platform's hosts are fetched unless ALLOW_PRIVATE_URLS
      const host = named !== undefined && (deps.anyMediaHost || PLATFORM_MEDIA_HOST.test(new URL(`https://${named}`).hostname)) ? named : DEFAULT_MEDIA_HOST
      try {
        const stream = await deps.platform().contactStatusMedia(row.media_ref, host)
        return { stream, mimetype: row.mimetype ?? 'application/octet-stream', size: row.size }
      } catch (err) {
        throw new StatusMediaFailed((err as Error).message)
      }
    },

    /** later statuses are refused (so never acknowledged) and delivered again after a restart */
    stop (): void { closed = true }
  }
}

export type ContactStatusService = ReturnType<typeof createContactStatusService>
