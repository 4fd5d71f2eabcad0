import type { ContactStatusRecord } from '../../src/db/stores/contact-statuses.js'
import type { ContactStatusView } from '../../schemas/contact-statuses.js'
import { NO_ANSWERS } from '../../schemas/contact-status-answers.js'

// A contact's status as the API and the `contact-status` event show it (before the account's answers are
// filled in): shared by the intake (the event) and the service (the routes).

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
