import type { Kysely } from 'kysely'
import type { Database } from '../database.js'
import { summarise, type StatusFacts, type StatusSummary, type SummarisedStatus } from '../../insights/summary.js'

// The insights store's writing half: a status's facts (its row, delivery receipts, viewers, reactions,
// replies and the session's own number) read in batches, turned into summaries by the one summary
// function (src/insights/summary.ts), and written as rows. Every read and write takes the caller's
// transaction (expiry's), so the summary and the deletion of the status commit together.

type Db = Kysely<Database>

/** the columns a summary reads, as its fields */
const STATUS_COLUMNS = [
  'id', 'session_id as sessionId', 'message_id as messageId', 'type', 'content', 'caption', 'created_at as createdAt',
  'contact_count as contactCount', 'target_numbers as targetNumbers', 'audience'
] as const

/** statuses per batch of fact reads (one `in (…)` list each) */
const BATCH = 200
/** recipient lines per insert: 8 columns, well below SQLite's 32,766 variables and PostgreSQL's 65,535 */
const LINES_PER_INSERT = 1000

export type StatusPick = (q: ReturnType<typeof statusRows>) => ReturnType<typeof statusRows>

function statusRows (db: Db) {
  return db.selectFrom('statuses').select(STATUS_COLUMNS)
}

/** The summaries of the statuses `pick` selects (from `statuses`), built by the one summary function. */
export async function summariesOf (db: Db, pick: StatusPick): Promise<StatusSummary[]> {
  const out: StatusSummary[] = []
  await eachBatch(db, pick, async (summaries) => { out.push(...summaries) })
  return out
}

/** Summarises and writes the statuses `pick` selects, a batch at a time (memory stays bounded); how many were written. */
export async function keepSummaries (db: Db, pick: StatusPick, now: number): Promise<number> {
  let written = 0
  await eachBatch(db, pick, async (summaries) => { written += await writeSummaries(db, summaries, now) })
  return written
}

async function eachBatch (db: Db, pick: StatusPick, use: (summaries: StatusSummary[]) => Promise<void>): Promise<void> {
  const rows = await pick(statusRows(db)).orderBy('id').execute()
  for (let i = 0; i < rows.length; i += BATCH) await use(await summariesOfRows(db, rows.slice(i, i + BATCH)))
}

async function summariesOfRows (db: Db, rows: SummarisedStatus[]): Promise<StatusSummary[]> {
  if (rows.length === 0) return []
  const ids = rows.map((r) => r.id)
  const sessionIds = [...new Set(rows.map((r) => r.sessionId))]
  // one after another: on SQLite a transaction is one connection, on PostgreSQL one client
  const owners = await db.selectFrom('sessions').select(['id', 'own_number']).where('id', 'in', sessionIds).execute()
  const deliveries = await db.selectFrom('status_deliveries').select(['status_id', 'number', 'jid', 'delivered_at']).where('status_id', 'in', ids).execute()
  const viewers = await db.selectFrom('viewers').select(['status_id', 'number', 'jid', 'viewed_at', 'is_real']).where('status_id', 'in', ids).execute()
  const reactions = await db.selectFrom('status_reactions').select(['status_id', 'number', 'jid', 'emoji']).where('status_id', 'in', ids).execute()
  const replies = await db.selectFrom('status_replies').select(['status_id', 'number', 'jid', 'replied_at']).where('status_id', 'in', ids).execute()
  const own = new Map(owners.map((o) => [o.id, o.own_number]))
  const facts = new Map<number, StatusFacts>(rows.map((status) => [status.id, {
    status: { ...status, createdAt: Number(status.createdAt), contactCount: Number(status.contactCount) },
    own: own.get(status.sessionId) ?? null,
    deliveries: [],
    viewers: [],
    reactions: [],
    replies: []
  }]))
  for (const d of deliveries) facts.get(d.status_id)?.deliveries.push({ number: d.number, jid: d.jid, deliveredAt: Number(d.delivered_at) })
  for (const v of viewers) facts.get(v.status_id)?.viewers.push({ number: v.number, jid: v.jid, viewedAt: Number(v.viewed_at), isReal: Number(v.is_real) })
  for (const r of reactions) facts.get(r.status_id)?.reactions.push({ number: r.number, jid: r.jid, emoji: r.emoji })
  for (const r of replies) facts.get(r.status_id)?.replies.push({ number: r.number, jid: r.jid, repliedAt: Number(r.replied_at) })
  return [...facts.values()].map(summarise)
}

/** Writes summaries (a status already summarised is left as it is); how many were written. */
export async function writeSummaries (db: Db, summaries: StatusSummary[], now: number): Promise<number> {
  if (summaries.length === 0) return 0
  // one insert for the batch's statuses and one per LINES_PER_INSERT lines: expiry holds its transaction
  // for these, and on PostgreSQL two statements per status made a backlog of 300 statuses take seconds
  const rows = await db.insertInto('insight_statuses').values(summaries.map((s) => ({
    ...summaryColumns(s),
    session_id: s.sessionId,
    message_id: s.messageId,
    summarised_at: now
  }))).onConflict((oc) => oc.columns(['session_id', 'status_id']).doNothing()).returning(['id', 'session_id', 'status_id']).execute()
  const idOf = new Map(rows.map((r) => [`${r.session_id}\n${Number(r.status_id)}`, r.id]))
  const lines = summaries.flatMap((s) => {
    const id = idOf.get(`${s.sessionId}\n${s.statusId}`)
    return id === undefined
      ? []
      : s.lines.map((l) => ({ insight_id: id, session_id: s.sessionId, ...lineColumns(s, l) }))
  })
  for (let i = 0; i < lines.length; i += LINES_PER_INSERT) {
    await db.insertInto('insight_recipients').values(lines.slice(i, i + LINES_PER_INSERT)).execute()
  }
  return rows.length
}

/** A summary's own columns (the live statuses' JSON, read by the same SQL as the stored rows, has the same). */
export function summaryColumns (s: StatusSummary) {
  return {
    status_id: s.statusId,
    type: s.type,
    caption_length: s.captionLength,
    audience_kind: s.audienceKind,
    audience_id: s.audienceId,
    audience_name: s.audienceName,
    audience_size: s.audienceSize,
    posted_at: s.postedAt,
    recipients: s.recipients,
    delivered: s.delivered,
    viewed: s.viewed,
    reacted: s.reacted,
    replied: s.replied,
    first_view_ms: s.firstViewMs,
    median_view_ms: s.medianViewMs
  }
}

/** A recipient line's own columns (stored, and in the live statuses' JSON alike). */
export function lineColumns (s: StatusSummary, l: StatusSummary['lines'][number]) {
  return {
    posted_at: s.postedAt,
    recipient: l.recipient,
    delivered_at: l.deliveredAt,
    viewed_at: l.viewedAt,
    reacted: l.reaction === null ? 0 : 1,
    replies: l.replies
  }
}
