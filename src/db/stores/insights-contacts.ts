import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../database.js'

// Insights per contact (issue 32): one row per recipient over the statuses in scope (the insights store's
// `with s, r`), aggregated in SQL; the median time to view is the nearest-rank p50 of the contact's views
// (row_number over their ordered times to view, the row at ceil(n / 2)). Names come from the phone's
// contacts, by number (or by LID for a recipient known only by it).

export type ContactSort = 'received' | 'viewed' | 'viewRate' | 'medianViewMs' | 'reactions' | 'replies' | 'lastViewedAt' | 'number'

export interface ContactQuery {
  sort: ContactSort
  order: 'asc' | 'desc'
  /** undefined: every row (CSV) */
  limit?: number
  offset: number
}

export interface ContactFigures {
  recipient: string
  name: string | null
  received: number
  delivered: number
  viewed: number
  reactions: number
  replies: number
  lastViewedAt: number | null
  medianViewMs: number | null
}

const SORTS: Record<ContactSort, string> = {
  received: 'a.received',
  viewed: 'a.viewed',
  viewRate: 'case when a.delivered = 0 then null else a.viewed * 1.0 / a.delivered end',
  medianViewMs: 'm.median',
  reactions: 'a.reactions',
  replies: 'a.replies',
  lastViewedAt: 'a.last_viewed_at',
  number: 'a.recipient'
}

interface Raw {
  recipient: string
  name: string | null
  received: number | string
  delivered: number | string
  viewed: number | string
  reactions: number | string | null
  replies: number | string | null
  last_viewed_at: number | string | null
  median: number | string | null
}

/** `scope` is the store's `with s (…), r (…)` prefix. */
export async function contactRows (db: Kysely<Database>, scope: RawBuilder<unknown>, sessionId: string, q: ContactQuery): Promise<ContactFigures[]> {
  const order = sql.raw(`${SORTS[q.sort]} ${q.order === 'asc' ? 'asc' : 'desc'} nulls last, a.recipient asc`)
  const page = q.limit === undefined ? sql`` : sql`limit ${q.limit} offset ${q.offset}`
  // a page not sorted by median: the page first, then the medians of its contacts only (no sort of every view)
  const pageFirst = q.limit !== undefined && q.sort !== 'medianViewMs'
  const { rows } = await sql<Raw>`${scope}, a as (
      select recipient, count(*) as received, count(delivered_at) as delivered, count(viewed_at) as viewed, sum(reacted) as reactions,
        sum(replies) as replies, max(viewed_at) as last_viewed_at
      from r group by recipient
    ), p as (
      select * from a ${pageFirst ? sql`order by ${order} ${page}` : sql`where 1 = 0`}
    ), d as (
      select recipient, case when viewed_at > posted_at then viewed_at - posted_at else 0 end as t,
        row_number() over (partition by recipient order by case when viewed_at > posted_at then viewed_at - posted_at else 0 end) as k,
        count(*) over (partition by recipient) as n
      from r where viewed_at is not null ${pageFirst ? sql`and recipient in (select recipient from p)` : sql``}
    ), m as (
      select recipient, t as median from d where k = (n + 1) / 2
    ), names as (
      select number as k, max(name) as name from phone_contacts where session_id = ${sessionId} and number is not null and name is not null group by number
      union all
      select lid as k, max(name) as name from phone_contacts where session_id = ${sessionId} and number is null and lid is not null and name is not null group by lid
    )
    select a.recipient, names.name, a.received, a.delivered, a.viewed, a.reactions, a.replies, a.last_viewed_at, m.median
    from ${pageFirst ? sql`p as a` : sql`a`} left join m on m.recipient = a.recipient left join names on names.k = a.recipient
    order by ${order} ${pageFirst ? sql`` : page}`.execute(db)
  const n = (v: number | string | null): number => Number(v ?? 0)
  return rows.map((r) => ({
    recipient: r.recipient,
    name: r.name,
    received: n(r.received),
    delivered: n(r.delivered),
    viewed: n(r.viewed),
    reactions: n(r.reactions),
    replies: n(r.replies),
    lastViewedAt: r.last_viewed_at === null ? null : Number(r.last_viewed_at),
    medianViewMs: r.median === null ? null : Number(r.median)
  }))
}
