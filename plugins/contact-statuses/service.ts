import type { Readable } from 'node:stream'
import type { FastifyBaseLogger } from 'fastify'
import type { ContactStatusRecord, ContactStatusStore } from '../../src/db/stores/contact-statuses.js'
import type { ContactStatusAnswerStore } from '../../src/db/stores/contact-status-answers.js'
import { NoStatusMedia, SessionNotFound, StatusMediaFailed, StatusNotFound } from '../../src/errors.js'
import { pageOf, pageRead } from '../../src/paging.js'
import { pnJid } from '../../src/jid.js'
import type { Platform } from '../../src/platform/platform.js'
import type { ContactStatusesQuery, ContactStatusPage, ContactStatusView } from '../../schemas/contact-statuses.js'
import { createContactStatusAnswers, requireConnected } from './answers.js'
import { toContactStatus } from './view.js'

// Contacts' statuses (issue 30), once committed (intake.ts, the platform's sink): the routes read them (the last
// 24 hours, newest first), stream a status' media only when asked, and send the read receipt only when asked: the
// account's owner decides who learns they looked. This side uses the platform; the intake is used by it.

export interface ContactStatusDeps {
  contactStatuses: ContactStatusStore
  /** the account's likes of and replies to them (answers.ts) */
  answers: ContactStatusAnswerStore
  /** whether the session is known (404 otherwise) */
  sessionExists: (sessionId: string) => Promise<boolean>
  log: FastifyBaseLogger
  /** the platform the account views, likes and replies through (it commits new statuses through intake.ts) */
  platform: Platform
  statusTtlMs: number
  /** ALLOW_PRIVATE_URLS: media from any host the status names (tests' emulator); else only the platform's */
  anyMediaHost: boolean
  now?: () => number
}

const iso = (ms: number): string => new Date(ms).toISOString()

/** The platform's media hosts (`mmg.whatsapp.net` and its kin): the only ones a status' media is fetched from in production. */
const PLATFORM_MEDIA_HOST = /(^|\.)whatsapp\.net$/i
const DEFAULT_MEDIA_HOST = 'mmg.whatsapp.net'

export function createContactStatusService (deps: ContactStatusDeps) {
  const store = deps.contactStatuses
  const now = deps.now ?? Date.now

  async function requireSession (sessionId: string): Promise<void> {
    if (!await deps.sessionExists(sessionId)) throw new SessionNotFound()
  }

  async function requireStatus (sessionId: string, statusId: string): Promise<ContactStatusRecord> {
    await requireSession(sessionId)
    const row = await store.find(sessionId, statusId)
    if (row === undefined || row.postedAt < now() - deps.statusTtlMs) throw new StatusNotFound()
    return row
  }

  const answers = createContactStatusAnswers({ answers: deps.answers, platform: deps.platform, log: deps.log, requireStatus, now })

  return {
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
      if (row.viewedAt !== null) return { id: row.messageId, viewedAt: iso(row.viewedAt), sent: false }
      requireConnected(deps.platform, sessionId)
      const participant = row.fromLid ?? row.fromJid
      await deps.platform.viewContactStatus(sessionId, {
        messageId: row.messageId,
        participant,
        participantPn: row.fromNumber === null ? null : pnJid(row.fromNumber)
      })
      const at = now()
      await store.markViewed(sessionId, row.messageId, at)
      deps.log.info({ sessionId, statusId: row.messageId }, "contact's status marked viewed")
      return { id: row.messageId, viewedAt: iso(at), sent: true }
    },

    /** GET …/media: the decrypted media, streamed from the platform's media server (nothing is kept). */
    async media (sessionId: string, statusId: string): Promise<{ stream: Readable, mimetype: string, size: number | null }> {
      const row = await requireStatus(sessionId, statusId)
      if (row.mediaRef === null) throw new NoStatusMedia()
      const { url } = JSON.parse(row.mediaRef) as { url: string | null }
      let named: string | undefined
      try { named = url === null ? undefined : new URL(url).host } catch { named = undefined }
      // the status names its media's address; only the platform's hosts are fetched unless ALLOW_PRIVATE_URLS
      const host = named !== undefined && (deps.anyMediaHost || PLATFORM_MEDIA_HOST.test(new URL(`https://${named}`).hostname)) ? named : DEFAULT_MEDIA_HOST
      try {
        const stream = await deps.platform.contactStatusMedia(row.mediaRef, host)
        return { stream, mimetype: row.mimetype ?? 'application/octet-stream', size: row.size }
      } catch (err) {
        throw new StatusMediaFailed((err as Error).message)
      }
    }
  }
}

export type ContactStatusService = ReturnType<typeof createContactStatusService>
