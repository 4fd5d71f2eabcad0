import type { ContactStatusRecord } from '../../src/db/stores/contact-statuses.js'
import type { ContactStatusView } from '../../schemas/contact-statuses.js'
import { NO_ANSWERS } from '../../schemas/contact-status-answers.js'

// A contact's status as the API and the `contact-status` event show it (before the account's answers are
// filled in): shared by the intake (the event) and the service (the routes).

const iso = (ms: number): string => new Date(ms).toISOString()

export function toContactStatus (r: ContactStatusRecord): ContactStatusView {
  return {
    id: r.messageId,
    number: r.fromNumber,
    lid: r.fromLid,
    jid: r.fromJid,
    type: r.type as ContactStatusView['type'],
    text: r.text,
    caption: r.caption,
    mediaType: r.mimetype,
    mediaSize: r.size,
    postedAt: iso(r.postedAt),
    receivedAt: iso(r.receivedAt),
    viewedAt: r.viewedAt === null ? null : iso(r.viewedAt),
    error: r.error,
    mentionsMe: r.mentionsMe,
    groupJid: r.groupJid,
    groupSubject: r.groupSubject,
    ...NO_ANSWERS
  }
}
