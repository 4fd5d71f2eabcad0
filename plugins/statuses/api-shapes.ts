import type { ReactionRecord, ReplyRecord, ViewerRecord } from '../../src/db/stores/viewers.js'
import type { SentStatusRow } from '../../src/db/stores/statuses.js'
import type { AudienceSnapshot } from '../../schemas/audience.js'
import type { Reaction, Reply, SentStatus, Viewer } from '../../schemas/status.js'

export function iso (ms: number): string {
  return new Date(ms).toISOString()
}

export function toViewer (r: ViewerRecord): Viewer {
  return { jid: r.jid, number: r.number, viewedAt: iso(r.viewed_at), isReal: r.is_real === 1 }
}

export function toReaction (r: ReactionRecord): Reaction {
  return { jid: r.jid, number: r.number, emoji: r.emoji, reactedAt: iso(r.reacted_at) }
}

export function toReply (r: ReplyRecord): Reply {
  return { jid: r.jid, number: r.number, text: r.text, repliedAt: iso(r.replied_at), messageId: r.message_id }
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
    audience: r.audience === null ? null : JSON.parse(r.audience) as AudienceSnapshot,
    viewerCount: r.viewer_count,
    reactionCount: r.reaction_count,
    replyCount: r.reply_count,
    error: r.error,
    unreachable: r.unreachable === '' ? [] : r.unreachable.split(','),
    mentions: r.mentions === '' ? [] : r.mentions.split(','),
    state: r.state,
    sentCount: r.sent_count
  }
}
