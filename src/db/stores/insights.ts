import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../database.js'
import type { StatusSummary } from '../../insights/summary.js'
import { keepSummaries, lineColumns, summariesOf, summaryColumns } from './insights-facts.js'
import { contactRows, type ContactQuery, type ContactFigures } from './insights-contacts.js'

export type { ContactQuery, ContactFigures, ContactSort } from './insights-contacts.js'

// Insights (issue 32): summaries of statuses that expired or were deleted (migration 017), and the figures
// read over them and over the statuses still live. A live status is summarised by the same function as at
// expiry (src/insights/summary.ts) and its rows are handed to the same SQL as one JSON parameter (SQLite:
// json_each; PostgreSQL: jsonb_to_recordset), so a status's figures are the same before and after it expires.
// Aggregation happens in SQL: views are grouped per absolute quarter hour (floor(ms / 900,000)), which the
// caller maps to its time zone (every zone's offset is a multiple of 15 minutes); the two percentiles are
// read with an ordered offset each.

/** What the figures are read over: one session's statuses posted in [from, to], optionally of one type or audience. */
export interface InsightFilter {
  sessionId: string
  from: number
  to: number
  type?: string
  /** 'numbers', 'list', 'contacts', 'phone' or 'saved' */
  audienceKind?: string
  /** a saved audience id */
  audienceId?: string
}

export interface Counts { statuses: number, recipients: number, delivered: number, viewed: number, reacted: number, replied: number }

/** A status's figures as read back (a summary's own, the kind as stored), and whether it is still live. */
export type StatusFigures = Omit<StatusSummary, 'sessionId' | 'messageId' | 'lines' | 'audienceKind'> & { live: boolean, audienceKind: string }

export interface InsightOverview {
  totals: Counts
  /** nearest rank over every view's time to view; null without views */
  timeToView: { p50Ms: number | null, p90Ms: number | null }
  byType: Array<Counts & { type: string }>
  byAudience: Array<Counts & { kind: string, audienceId: string | null, name: string | null }>
  /** the statuses' counts per absolute quarter hour of posting (`bucket` = floor(postedAt / 900,000)) */
  posted: Array<Counts & { bucket: number }>
  /** views per absolute quarter hour of viewing */
  views: Array<{ bucket: number, views: number }>
  /** the page of statuses, newest (highest id) first: `limit` + 1 rows when more follow */
  statuses: StatusFigures[]
}

export interface InsightStore {
  /**
   * In the caller's transaction (expiry's): writes the summaries of the statuses created before `before`
   * and at or after `keepSince` (older ones are past retention). How many were written.
   */
  keepExpired: (before: number, keepSince: number) => Promise<number>
  /** In the caller's transaction (delete-status): writes the summary of one status; false when it has none to write. */
  keep: (sessionId: string, statusId: number) => Promise<boolean>
  /** Removes a status's summary (delete-status with forget); whether there was one. */
  forget: (sessionId: string, statusId: number) => Promise<boolean>
  /** Removes summaries of statuses posted before `before`: how many per session. */
  prune: (before: number) => Promise<Map<string, number>>
  /** The figures of `filter`, with a page of statuses (`limit` + 1 read, ids below `beforeId`). */
  overview: (filter: InsightFilter, page: { limit: number, beforeId?: number }) => Promise<InsightOverview>
  /** Per contact figures of `filter`, sorted; `limit` undefined: every row. */
  contacts: (filter: InsightFilter, query: ContactQuery) => Promise<ContactFigures[]>
}

/** Live rows handed to SQL as one JSON parameter, as a table (the only words the backends differ in). */
export type LiveTable = (json: string, columns: ReadonlyArray<readonly [string, 'int' | 'text']>) => RawBuilder<unknown>

/** What differs per backend (src/db/sqlite/insights.ts, src/db/postgres/insights.ts). */
export interface InsightBackend {
  live: LiveTable
  /** insight_recipients, walked along insight_recipients_delay (SQLite's planner is told which index to take) */
  delayIndex: RawBuilder<unknown>
  /** before an expiry's summaries are read: what keeps a receipt from committing to an expiring status meanwhile */
  lockExpiring: (tx: Kysely<Database>, before: number) => Promise<void>
}

const STATUS_COLS = [
  ['status_id', 'int'], ['type', 'text'], ['caption_length', 'int'], ['audience_kind', 'text'], ['audience_id', 'text'], ['audience_name', 'text'],
  ['audience_size', 'int'], ['posted_at', 'int'], ['recipients', 'int'], ['delivered', 'int'], ['viewed', 'int'], ['reacted', 'int'], ['replied', 'int'],
  ['first_view_ms', 'int'], ['median_view_ms', 'int']
] as const
const LINE_COLS = [['status_id', 'int'], ['posted_at', 'int'], ['recipient', 'text'], ['delivered_at', 'int'], ['viewed_at', 'int'], ['reacted', 'int'], ['replies', 'int']] as const
const STATUS_LIST = sql.raw(STATUS_COLS.map(([c]) => c).join(', '))
const LINE_LIST = sql.raw(LINE_COLS.slice(1).map(([c]) => c).join(', '))

/** A quarter hour in ms: every time zone's offset is a multiple of it. */
export const BUCKET_MS = 900_000
const BUCKET = sql.raw(String(BUCKET_MS))
/** time to view, never below 0 (as the summary counts it) */
export const DELAY = sql`case when viewed_at > posted_at then viewed_at - posted_at else 0 end`

export function insightStore (db: Kysely<Database>, backend: InsightBackend): InsightStore {
  const { live, delayIndex } = backend

  /**
   * The statuses in scope: the summaries in range plus the live ones (summarised now, filtered alike).
   * `statuses`: `with s (…)`; `lines`: `with r (…)` (every recipient line); `where`: the summaries' own lines
   * (insight_recipients, insight_view_buckets); `viewed`: the live lines with a view, as JSON (posted_at, viewed_at).
   */
  async function scope (f: InsightFilter) {
    const summaries = (await summariesOf(db, (q) => q.where('session_id', '=', f.sessionId).where('created_at', '>=', f.from).where('created_at', '<=', f.to)))
      .filter((s) => (f.type === undefined || s.type === f.type) && (f.audienceKind === undefined || s.audienceKind === f.audienceKind) &&
        (f.audienceId === undefined || s.audienceId === f.audienceId))
    const filters = [sql`session_id = ${f.sessionId}`, sql`posted_at >= ${f.from}`, sql`posted_at <= ${f.to}`]
    if (f.type !== undefined) filters.push(sql`type = ${f.type}`)
    if (f.audienceKind !== undefined) filters.push(sql`audience_kind = ${f.audienceKind}`)
    if (f.audienceId !== undefined) filters.push(sql`audience_id = ${f.audienceId}`)
    const narrowed = filters.length > 3
    const chosen = sql.join(filters, sql` and `)
    const where = sql.join([
      sql`session_id = ${f.sessionId}`, sql`posted_at >= ${f.from}`, sql`posted_at <= ${f.to}`,
      ...(narrowed ? [sql`insight_id in (select id from insight_statuses where ${chosen})`] : [])
    ], sql` and `)
    const lines = summaries.flatMap(linesJson)
    const viewed = JSON.stringify(lines.filter((l) => l.viewed_at !== null)
      .map((l) => ({ status_id: l.status_id, posted_at: l.posted_at, viewed_at: l.viewed_at })))
    // a live status whose summary a cleanup committed since it was read here counts once: by its summary
    const still = sql`status_id not in (select status_id from insight_statuses where session_id = ${f.sessionId})`
    return {
      statuses: sql`with s as (
        select ${STATUS_LIST}, 0 as live from insight_statuses where ${chosen}
        union all select ${STATUS_LIST}, 1 as live from (${live(JSON.stringify(summaries.map(summaryColumns)), STATUS_COLS)}) ls where ${still}
      )`,
      lines: () => sql`with r as (
        select ${LINE_LIST} from insight_recipients where ${where}
        union all select ${LINE_LIST} from (${live(JSON.stringify(lines), LINE_COLS)}) lr where ${still}
      )`,
      where,
      viewed: sql`select posted_at, viewed_at from (${live(viewed, [['status_id', 'int'], ['posted_at', 'int'], ['viewed_at', 'int']])}) lvs where ${still}`
    }
  }

  return {
    async keepExpired (before, keepSince) {
      await backend.lockExpiring(db, before)
      return await keepSummaries(db, (q) => q.where('created_at', '<', before).where('created_at', '>=', keepSince), Date.now())
    },
    async keep (sessionId, statusId) {
      return await keepSummaries(db, (q) => q.where('session_id', '=', sessionId).where('id', '=', statusId), Date.now()) > 0
    },
    async forget (sessionId, statusId) {
      const result = await db.deleteFrom('insight_statuses').where('session_id', '=', sessionId).where('status_id', '=', statusId).executeTakeFirst()
      return result.numDeletedRows > 0n
    },
    async prune (before) {
      // their recipient lines go by cascade (primary key (insight_id, recipient))
      const gone = await db.deleteFrom('insight_statuses').where('posted_at', '<', before).returning(['session_id']).execute()
      const perSession = new Map<string, number>()
      for (const g of gone) perSession.set(g.session_id, (perSession.get(g.session_id) ?? 0) + 1)
      return perSession
    },
    async overview (f, page) {
      const { statuses: w, where, viewed: liveViewed } = await scope(f)
      const counts = sql`count(*) as statuses, sum(recipients) as recipients, sum(delivered) as delivered, sum(viewed) as viewed,
        sum(reacted) as reacted, sum(replied) as replied`
      const totals = (await sql<RawCounts>`${w} select ${counts} from s`.execute(db)).rows[0]
      const byType = (await sql<RawCounts & { type: string }>`${w} select type, ${counts} from s group by type order by type`.execute(db)).rows
      const byAudience = (await sql<RawCounts & { kind: string, audience_id: string | null, name: string | null }>`${w}
        select audience_kind as kind, audience_id, max(audience_name) as name, ${counts} from s group by audience_kind, audience_id order by audience_kind, audience_id`.execute(db)).rows
      const posted = (await sql<RawCounts & { bucket: number }>`${w} select posted_at / ${BUCKET} as bucket, ${counts} from s group by posted_at / ${BUCKET}`.execute(db)).rows
      // the summaries' views from their quarter-hour counts (migration 017's trigger keeps them), the live ones' from their lines
      const views = (await sql<{ bucket: number, views: number }>`select bucket, sum(views) as views from (
          select bucket, views from insight_view_buckets where ${where}
          union all select viewed_at / ${BUCKET} as bucket, 1 as views from (${liveViewed}) lv
        ) v group by bucket`.execute(db)).rows
      // nearest rank, in two steps: which quarter hour of time to view holds the rank (from the counts), then an
      // ordered offset within it along insight_recipients_delay, merged with the live views' times
      const quarters = (await sql<{ q: number, n: number }>`select q, sum(n) as n from (
          select delay_bucket as q, views as n from insight_view_buckets where ${where}
          union all select ${DELAY} / ${BUCKET} as q, 1 as n from (${liveViewed}) lv
        ) v group by q order by q`.execute(db)).rows.map((r) => ({ q: Number(r.q), n: Number(r.n) }))
      const viewed = quarters.reduce((a, r) => a + r.n, 0)
      const rank = async (p: number): Promise<number | null> => {
        if (viewed === 0) return null
        let k = Math.max(1, Math.ceil(p * viewed))
        const quarter = quarters.find((r) => { if (k <= r.n) return true; k -= r.n; return false })
        if (quarter === undefined) return null
        const within = sql`${DELAY} >= ${quarter.q * BUCKET_MS} and ${DELAY} < ${(quarter.q + 1) * BUCKET_MS}`
        const row = (await sql<{ d: number }>`select ${DELAY} as d from ${delayIndex} where viewed_at is not null and ${where} and ${within}
          union all select ${DELAY} as d from (${liveViewed}) lv where ${within} order by 1 limit 1 offset ${k - 1}`.execute(db)).rows[0]
        return row === undefined ? null : Number(row.d)
      }
      const p50Ms = await rank(0.5)
      const p90Ms = await rank(0.9)
      const statuses = (await sql<RawStatus>`${w} select ${STATUS_LIST}, live from s
        ${page.beforeId === undefined ? sql`` : sql`where status_id < ${page.beforeId}`} order by status_id desc limit ${page.limit + 1}`.execute(db)).rows
      return {
        totals: countsOf(totals),
        timeToView: { p50Ms, p90Ms },
        byType: byType.map((r) => ({ type: r.type, ...countsOf(r) })),
        byAudience: byAudience.map((r) => ({ kind: r.kind, audienceId: r.audience_id, name: r.name, ...countsOf(r) })),
        posted: posted.map((r) => ({ bucket: Number(r.bucket), ...countsOf(r) })),
        views: views.map((r) => ({ bucket: Number(r.bucket), views: Number(r.views) })),
        statuses: statuses.map(figuresOf)
      }
    },
    async contacts (f, query) {
      return await contactRows(db, (await scope(f)).lines(), f.sessionId, query)
    }
  }
}

type RawCounts = Record<keyof Counts, number | string | null>
type RawStatus = Record<typeof STATUS_COLS[number][0], number | string | null> & { live: number }

function countsOf (r: RawCounts | undefined): Counts {
  const n = (v: number | string | null | undefined): number => Number(v ?? 0)
  return {
    statuses: n(r?.statuses), recipients: n(r?.recipients), delivered: n(r?.delivered), viewed: n(r?.viewed), reacted: n(r?.reacted), replied: n(r?.replied)
  }
}

const num = (v: number | string | null): number | null => v === null ? null : Number(v)

function figuresOf (r: RawStatus): StatusFigures {
  return {
    statusId: Number(r.status_id),
    live: Number(r.live) === 1,
    type: String(r.type),
    captionLength: Number(r.caption_length),
    audienceKind: String(r.audience_kind),
    audienceId: r.audience_id === null ? null : String(r.audience_id),
    audienceName: r.audience_name === null ? null : String(r.audience_name),
    audienceSize: Number(r.audience_size),
    postedAt: Number(r.posted_at),
    recipients: Number(r.recipients),
    delivered: Number(r.delivered),
    viewed: Number(r.viewed),
    reacted: Number(r.reacted),
    replied: Number(r.replied),
    firstViewMs: num(r.first_view_ms),
    medianViewMs: num(r.median_view_ms)
  }
}

function linesJson (s: StatusSummary): Array<Record<string, number | string | null>> {
  return s.lines.map((l) => ({ status_id: s.statusId, ...lineColumns(s, l) }))
}
