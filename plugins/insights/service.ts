import type { Stores } from '../../src/db/stores/index.js'
import type { Counts, InsightFilter, StatusFigures } from '../../src/db/stores/insights.js'
import { BadRequest, SessionNotFound } from '../../src/errors.js'
import { isTimeZone, zoneClock } from '../../src/insights/zones.js'
import { AUDIENCE_KINDS, CONTACT_CSV_COLUMNS, type InsightContact, type InsightContactPage, type InsightContactsQuery, type Insights, type InsightsQuery } from '../../schemas/insights.js'
import { iso } from '../../src/api-shapes.js'
import { toCsv } from '../statuses/report.js'

// Insights (issue 32): the store aggregates in SQL (summaries of expired statuses and the live ones' rows
// alike); this service checks the query, maps quarter-hour buckets to the caller's time zone and shapes the
// answer. How each figure is counted: docs/insights.md.

const DAY = 86_400_000
const DEFAULT_SPAN = 30 * DAY

export interface InsightDeps {
  stores: Pick<Stores, 'insights' | 'sessions'>
}

const rate = (viewed: number, delivered: number): number | null => delivered === 0 ? null : viewed / delivered

export function createInsights (deps: InsightDeps) {
  const { insights, sessions } = deps.stores

  /** The session's filter out of the query: 400 naming the field when it does not hold together. */
  async function filterOf (sessionId: string, q: { from?: string, to?: string, type?: string, audience?: string }): Promise<InsightFilter> {
    if (await sessions.find(sessionId) === undefined) throw new SessionNotFound()
    const to = q.to === undefined ? Date.now() : Date.parse(q.to)
    const from = q.from === undefined ? to - DEFAULT_SPAN : Date.parse(q.from)
    if (Number.isNaN(to)) throw new BadRequest('querystring.to must be an ISO 8601 date-time')
    if (Number.isNaN(from)) throw new BadRequest('querystring.from must be an ISO 8601 date-time')
    if (from > to) throw new BadRequest('querystring.from must not be after querystring.to')
    const filter: InsightFilter = { sessionId, from, to }
    if (q.type !== undefined) filter.type = q.type
    if (q.audience !== undefined) {
      if ((AUDIENCE_KINDS as readonly string[]).includes(q.audience)) filter.audienceKind = q.audience
      else filter.audienceId = q.audience
    }
    return filter
  }

  async function overview (sessionId: string, q: InsightsQuery): Promise<Insights> {
    const tz = q.tz ?? 'UTC'
    if (!isTimeZone(tz)) throw new BadRequest('querystring.tz must be an IANA time zone name, such as Europe/Berlin or UTC')
    const filter = await filterOf(sessionId, q)
    const limit = q.limit ?? 50
    const data = await insights.overview(filter, { limit, beforeId: q.cursor === undefined ? undefined : Number(q.cursor) })
    const clock = zoneClock(tz)
    const viewsByHour = new Array<number>(24).fill(0)
    const viewsByWeekday = new Array<number>(7).fill(0)
    for (const b of data.views) {
      const t = clock.bucket(b.bucket)
      viewsByHour[t.hour] += b.views
      viewsByWeekday[t.weekday] += b.views
    }
    const emptyDay = (date: string) => ({ date, statuses: 0, delivered: 0, viewed: 0, reacted: 0, replied: 0 })
    const days = new Map(clock.dates(filter.from, filter.to).map((date) => [date, emptyDay(date)]))
    for (const b of data.posted) {
      const date = clock.bucket(b.bucket).date
      const day = days.get(date) ?? emptyDay(date)
      days.set(date, day)
      day.statuses += b.statuses; day.delivered += b.delivered; day.viewed += b.viewed; day.reacted += b.reacted; day.replied += b.replied
    }
    const page = data.statuses.slice(0, limit)
    const withRate = <C extends Counts>(c: C): C & { viewRate: number | null } => ({ ...c, viewRate: rate(c.viewed, c.delivered) })
    return {
      from: iso(filter.from),
      to: iso(filter.to),
      tz,
      totals: { ...withRate(data.totals), timeToView: data.timeToView },
      viewsByHour,
      viewsByWeekday,
      daily: [...days.values()].sort((a, b) => a.date < b.date ? -1 : 1),
      byType: data.byType.map(withRate),
      byAudience: data.byAudience.map((a) => withRate({ ...a, kind: a.kind as typeof AUDIENCE_KINDS[number] })),
      statuses: page.map(statusOf),
      nextCursor: data.statuses.length > limit ? String(page[page.length - 1].statusId) : null
    }
  }

  async function contactRows (sessionId: string, q: InsightContactsQuery, limit: number | undefined): Promise<InsightContact[]> {
    const filter = await filterOf(sessionId, q)
    const rows = await insights.contacts(filter, { sort: q.sort ?? 'viewed', order: q.order ?? 'desc', limit, offset: q.cursor === undefined ? 0 : Number(q.cursor) })
    return rows.map((r) => ({
      number: r.recipient,
      name: r.name,
      received: r.received,
      viewed: r.viewed,
      viewRate: rate(r.viewed, r.delivered),
      medianViewMs: r.medianViewMs,
      reactions: r.reactions,
      replies: r.replies,
      lastViewedAt: r.lastViewedAt === null ? null : iso(r.lastViewedAt)
    }))
  }

  /** A page of contacts; the cursor is the offset of the next page in this sort order. */
  async function contacts (sessionId: string, q: InsightContactsQuery): Promise<InsightContactPage> {
    const limit = q.limit ?? 100
    const rows = await contactRows(sessionId, q, limit + 1)
    const offset = q.cursor === undefined ? 0 : Number(q.cursor)
    return { items: rows.slice(0, limit), nextCursor: rows.length > limit ? String(offset + limit) : null }
  }

  /** Every contact as CSV (RFC 4180, CRLF), the header row first, in the query's sort order. */
  async function contactsCsv (sessionId: string, q: InsightContactsQuery): Promise<string> {
    return toCsv(CONTACT_CSV_COLUMNS, await contactRows(sessionId, { ...q, cursor: undefined }, undefined))
  }

  return { overview, contacts, contactsCsv }
}

export type InsightService = ReturnType<typeof createInsights>

function statusOf (s: StatusFigures): Insights['statuses'][number] {
  return {
    statusId: String(s.statusId),
    live: s.live,
    type: s.type,
    captionLength: s.captionLength,
    audience: { kind: s.audienceKind as typeof AUDIENCE_KINDS[number], audienceId: s.audienceId, name: s.audienceName, size: s.audienceSize },
    postedAt: iso(s.postedAt),
    recipients: s.recipients,
    delivered: s.delivered,
    viewed: s.viewed,
    reacted: s.reacted,
    replied: s.replied,
    viewRate: rate(s.viewed, s.delivered),
    firstViewMs: s.firstViewMs,
    medianViewMs: s.medianViewMs
  }
}
