import type { ContactStatus, ContactStatusSink } from '../../src/platform/platform.js'
import type { DomainEvents } from '../domain-events/index.js'
import { toContactStatus } from '../contact-statuses/view.js'

// Contacts' statuses as they arrive (issue 30): the platform hands each one over through this sink before it
// acks its `<status>` stanza; it is committed here with its `contact-status` event (one transaction: the event
// log). The platform depends on this side only; what the account does with them through the platform (view,
// like, reply, media) is service.ts, which depends on the platform: no cycle between the two.

export interface ContactStatusIntakeDeps {
  events: DomainEvents
  now?: () => number
}

export function createContactStatusIntake (deps: ContactStatusIntakeDeps) {
  const now = deps.now ?? Date.now
  const stats = { received: 0, redelivered: 0, undecryptable: 0 }
  let closed = false

  async function commit (sessionId: string, s: ContactStatus): Promise<void> {
    if (closed) throw new Error('contact statuses are closed')
    const row = await deps.events.within(async (tx, emit) => {
      const r = await tx.contactStatuses.record(sessionId, {
        messageId: s.messageId,
        fromJid: s.fromJid,
        fromLid: s.fromLid,
        fromNumber: s.fromNumber,
        type: s.type,
        text: s.text,
        caption: s.caption,
        mimetype: s.mimetype,
        size: s.size,
        mediaRef: s.mediaRef,
        error: s.error,
        postedAt: s.postedAt,
        mentionsMe: s.mentionsMe,
        groupJid: s.groupJid,
        groupSubject: s.groupSubject
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

  const sink: ContactStatusSink = { commit }
  return {
    sink,
    stats: (): Readonly<typeof stats> => ({ ...stats }),
    /** later statuses are refused (so never acknowledged) and delivered again after a restart */
    stop (): void { closed = true }
  }
}

export type ContactStatusIntake = ReturnType<typeof createContactStatusIntake>
