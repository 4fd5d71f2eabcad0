import type { ReactionRecord, ReplyRecord, ViewerRecord } from './db/stores/viewers.js'
import type { SentStatus as SentStatusRecord } from './db/stores/statuses.js'
import type { AudienceSnapshot } from '../schemas/audience.js'
import type { Reaction, Reply, SentStatus, Viewer } from '../schemas/status.js'

// The record-to-answer shapes of a sent status and its viewers, reactions and replies. They live in src/, not in a
// plugin folder, because several plugins share them (send-status, statuses, viewer-ingest, interaction-ingest,
// insights) and plugins/statuses itself imports send-status: a plugin's file here would make a folder cycle.

export function iso (ms: number): string {
  return new Date(ms).toISOString()
}

export function toViewer (r: ViewerRecord): Viewer {
  return { jid: r.jid, number: r.number, viewedAt: iso(r.viewedAt), isReal: r.isReal === 1 }
}

export function toReaction (r: ReactionRecord): Reaction {
  return { jid: r.jid, number: r.number, emoji: r.emoji, reactedAt: iso(r.reactedAt) }
}

export function toReply (r: ReplyRecord): Reply {
  return { jid: r.jid, number: r.number, text: r.text, repliedAt: iso(r.repliedAt), messageId: r.messageId }
}

export function toSentStatus (r: SentStatusRecord): SentStatus {
  return {
    id: String(r.id),
    type: r.type,
    content: r.content,
    caption: r.caption,
    timestamp: iso(r.createdAt),
    platformMessageId: r.messageId,
    contactCount: r.contactCount,
    targetNumbers: r.targetNumbers,
    audience: r.audience === null ? null : JSON.parse(r.audience) as AudienceSnapshot,
    viewerCount: r.viewerCount,
    reactionCount: r.reactionCount,
    replyCount: r.replyCount,
    error: r.error,
    unreachable: r.unreachable === '' ? [] : r.unreachable.split(','),
    mentions: r.mentions === '' ? [] : r.mentions.split(','),
    state: r.state,
    sentCount: r.sentCount
  }
}
