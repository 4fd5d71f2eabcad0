// What stays of a status (issue 32): its summary, built from the same facts as the per-status report
// (plugins/statuses/report.ts). One function for both uses: expiry and delete-status write it, and the
// insights read path builds it for statuses still live, so a status's figures never change at expiry.
//
// The lines are the report's: everyone the status was meant for (its audience snapshot, or the numbers
// requested), then anyone else who viewed, reacted or replied; the own number left out. A view implies the
// status arrived (without a delivery receipt, deliveredAt is the view time); a recipient known only by its
// LID is `<lid>@lid`.

/** The status as far as a summary needs it (the statuses store's `Status` has these fields). */
export interface SummarisedStatus {
  id: number
  sessionId: string
  messageId: string
  type: string
  content: string
  caption: string
  createdAt: number
  contactCount: number
  /** the requested recipients (digits), comma-separated */
  targetNumbers: string
  /** the audience snapshot (JSON) or null */
  audience: string | null
}

/** Someone as the receipts and interactions name them: digits, or a LID jid while no number is known. */
interface Who { number: string | null, jid: string }

export interface StatusFacts {
  status: SummarisedStatus
  /** the session's own number (left out of the lines) */
  own: string | null
  deliveries: Array<Who & { deliveredAt: number }>
  viewers: Array<Who & { viewedAt: number, /** 1: a real contact's view */ isReal: number }>
  /** current reactions; '' is a reaction taken back */
  reactions: Array<Who & { emoji: string }>
  replies: Array<Who & { repliedAt: number }>
}

export interface SummaryLine {
  recipient: string
  deliveredAt: number | null
  viewedAt: number | null
  reaction: string | null
  firstRepliedAt: number | null
  replies: number
}

export type AudienceKind = 'numbers' | 'list' | 'contacts' | 'phone' | 'saved'

export interface StatusSummary {
  statusId: number
  sessionId: string
  messageId: string
  type: string
  captionLength: number
  audienceKind: AudienceKind
  audienceId: string | null
  audienceName: string | null
  audienceSize: number
  postedAt: number
  recipients: number
  delivered: number
  viewed: number
  reacted: number
  replied: number
  firstViewMs: number | null
  medianViewMs: number | null
  lines: SummaryLine[]
}

interface Snapshot { type: Exclude<AudienceKind, 'numbers'>, audienceId?: string | null, name?: string | null, recipients?: string[] }

/** Nearest rank: the smallest value with at least p of them at or below it (p50 of an even count: the lower middle). */
export function nearestRank (sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]
}

/** Time from posting to a view, in ms (never below 0: a phone's clock may run behind). */
export const timeToView = (postedAt: number, viewedAt: number): number => Math.max(0, viewedAt - postedAt)

export function summarise (facts: StatusFacts): StatusSummary {
  const { status, own } = facts
  const snapshot = status.audience === null ? null : JSON.parse(status.audience) as Snapshot
  const meant = snapshot === null ? status.targetNumbers.split(',').filter((n) => n !== '') : snapshot.recipients ?? []
  const lines = new Map<string, SummaryLine>()
  const line = (key: string): SummaryLine => {
    let l = lines.get(key)
    if (l === undefined) lines.set(key, l = { recipient: key, deliveredAt: null, viewedAt: null, reaction: null, firstRepliedAt: null, replies: 0 })
    return l
  }
  const keyOf = (r: Who): string | null => (r.number ?? r.jid) === own ? null : r.number ?? r.jid
  for (const n of meant) if (n !== own) line(n)
  for (const d of facts.deliveries) {
    const k = keyOf(d)
    if (k === null) continue
    const l = line(k)
    if (l.deliveredAt === null || d.deliveredAt < l.deliveredAt) l.deliveredAt = d.deliveredAt
  }
  for (const v of facts.viewers) {
    const k = v.isReal === 1 ? keyOf(v) : null
    if (k === null) continue
    const l = line(k)
    if (l.viewedAt === null || v.viewedAt < l.viewedAt) l.viewedAt = v.viewedAt
  }
  for (const r of facts.reactions) { const k = keyOf(r); if (k !== null && r.emoji !== '') line(k).reaction = r.emoji }
  for (const r of facts.replies) {
    const k = keyOf(r)
    if (k === null) continue
    const l = line(k)
    l.replies++
    if (l.firstRepliedAt === null || r.repliedAt < l.firstRepliedAt) l.firstRepliedAt = r.repliedAt
  }
  // a view implies delivery
  for (const l of lines.values()) if (l.viewedAt !== null) l.deliveredAt ??= l.viewedAt
  const all = [...lines.values()]
  const delays = all.flatMap((l) => l.viewedAt === null ? [] : [timeToView(status.createdAt, l.viewedAt)]).sort((a, b) => a - b)
  const text = status.type === 'text' ? status.content : status.caption
  return {
    statusId: status.id,
    sessionId: status.sessionId,
    messageId: status.messageId,
    type: status.type,
    captionLength: [...text].length,
    audienceKind: snapshot === null ? 'numbers' : snapshot.type,
    audienceId: snapshot?.audienceId ?? null,
    audienceName: snapshot?.name ?? null,
    audienceSize: status.contactCount,
    postedAt: status.createdAt,
    recipients: all.length,
    delivered: all.filter((l) => l.deliveredAt !== null).length,
    viewed: delays.length,
    reacted: all.filter((l) => l.reaction !== null).length,
    replied: all.filter((l) => l.replies > 0).length,
    firstViewMs: delays.length === 0 ? null : delays[0],
    medianViewMs: nearestRank(delays, 0.5),
    lines: all
  }
}
