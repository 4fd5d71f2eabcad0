import type { ViewerRow } from '../../../db/database.js'
import type { SentStatusRow } from '../../../db/repositories/statuses.js'
import type { SentStatus, Viewer } from '../../../schemas/status.js'

export function iso (ms: number): string {
  return new Date(ms).toISOString()
}

export function toViewer (r: ViewerRow): Viewer {
  return { jid: r.jid, number: r.number, viewedAt: iso(r.viewed_at), isReal: r.is_real === 1 }
}

export function toSentStatus (r: SentStatusRow): SentStatus {
  return {
    id: String(r.id),
    type: r.type,
    content: r.content,
    caption: r.caption,
    timestamp: iso(r.created_at),
    platformMessageId: r.message_id,
    contactCount: r.contact_count,
    targetNumbers: r.target_numbers,
    viewerCount: r.viewer_count,
    error: r.error,
    state: r.state,
    sentCount: r.sent_count
  }
}
