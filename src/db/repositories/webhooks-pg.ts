import type pg from 'pg'
import type { EventLogRow, WebhookDeliveryRow } from '../database.js'
import { inTransaction } from './pg-tx.js'
import type { AttemptOutcome, DeliveriesOf, NewDelivery, Subscriber } from './webhooks.js'

type Claimed = WebhookDeliveryRow & { url: string, secret: string }

// Deliveries that may go out now or later: pending ones, and `sending` ones another node claimed (they go
// out again once their claim has run out: that node died mid-attempt), when no earlier delivery with
// the same order key is still waiting. DUE is when each may go.
const CANDIDATES = `from webhook_deliveries d join webhooks w on w.id = d.webhook_id
  where (d.status = 'pending' or (d.status = 'sending' and d.claimed_until is not null)) and w.enabled = 1 and not exists (
    select 1 from webhook_deliveries e where e.webhook_id = d.webhook_id and e.order_key = d.order_key and e.id < d.id
    and e.status in ('pending', 'sending'))`
const DUE = "case when d.status = 'sending' then d.claimed_until else d.next_attempt_at end"

/** Who claims deliveries from this outbox, and for how long a claim holds without an outcome. */
export interface DeliveryClaim {
  nodeId: string
  ttlMs: number
}

const count = (r: pg.QueryResult): number => r.rowCount ?? 0

/**
 * webhookOutbox's PostgreSQL twin: the same rows and rules, asynchronous. The claim marks due rows
 * `sending` by this node until now + ttlMs, in one statement that skips rows another node is claiming
 * (FOR UPDATE SKIP LOCKED), so several nodes can work one outbox without sending a delivery twice; a row
 * waiting for an earlier one with its order key stays waiting whichever node holds that one. Outcomes
 * are written only while the claim is still this node's; a node starting again puts back only its own
 * interrupted claims (another node's are its business until they run out). The counts behind stats()
 * are read in the background: the last known values answer at once.
 */
export function pgWebhookOutbox (pool: pg.Pool, claim: DeliveryClaim) {
  const me = claim.nodeId
  const counts = { pending: 0, failing: 0, reading: false }
  function refreshCounts (): void {
    if (counts.reading) return
    counts.reading = true
    pool.query<{ pending: number, failing: number }>(
      `select (select count(*) from webhook_deliveries where status in ('pending', 'sending')) as pending,
        (select count(distinct webhook_id) from webhook_deliveries where status = 'pending' and attempts > 0) +
        (select count(*) from webhooks where enabled = 0 and disabled_reason is not null) as failing`)
      .then((r) => { counts.pending = Number(r.rows[0].pending); counts.failing = Number(r.rows[0].failing) }, () => {})
      .finally(() => { counts.reading = false })
  }
  refreshCounts()

  let inserts: Promise<void> = Promise.resolve()
  async function write (rows: NewDelivery[], db: pg.Pool | pg.PoolClient = pool): Promise<void> {
    await db.query(
      `insert into webhook_deliveries (webhook_id, message_id, event_type, session_id, order_key, body, status, attempts, next_attempt_at, created_at)
       select t.webhook_id, t.message_id, t.event_type, t.session_id, t.order_key, t.body, 'pending', 0, t.at, t.at
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[])
         with ordinality as t(webhook_id, message_id, event_type, session_id, order_key, body, at, n)
       order by t.n`,
      [rows.map((r) => r.webhookId), rows.map((r) => r.messageId), rows.map((r) => r.eventType), rows.map((r) => r.sessionId),
        rows.map((r) => r.orderKey), rows.map((r) => r.body), rows.map((r) => r.at)])
  }

  return {
    subscribers: async (): Promise<Subscriber[]> => (await pool.query<Subscriber>('select id, events, session_id, key_id, enabled, updated_at from webhooks')).rows,
    /**
     * Resolves once every row is committed (one statement). Inserts run one after another, in the order
     * they were asked for, so ids follow the order the events happened in (an order key goes out in id
     * order); statements on several pooled connections at once would not keep it.
     */
    /**
     * The deliveries of up to `limit` logged events past the `webhooks` cursor, and the cursor moved, in
     * one transaction; the cursor row is locked (SKIP LOCKED: -1 when another node is at it), so one
     * node at a time makes deliveries, in event order.
     */
    fromLog: async (limit: number, build: DeliveriesOf): Promise<number> => await inTransaction(pool, async (client) => {
      const cursor = await client.query<{ last_id: number }>("select last_id from event_cursors where name = 'webhooks' for update skip locked")
      if (cursor.rows.length === 0) return -1
      const events = (await client.query<EventLogRow>('select * from event_log where id > $1 order by id limit $2', [cursor.rows[0].last_id, limit])).rows
      if (events.length === 0) return 0
      const rows = build(events)
      if (rows.length > 0) await write(rows, client)
      await client.query("update event_cursors set last_id = $1 where name = 'webhooks'", [events[events.length - 1].id])
      return events.length
    }),
    insert: async (rows: NewDelivery[]): Promise<void> => {
      if (rows.length === 0) return
      const mine = inserts.then(async () => { await write(rows) })
      inserts = mine.catch(() => {})
      await mine
    },
    async claimDue (now: number, limit: number): Promise<Claimed[]> {
      if (limit <= 0) return []
      const result = await pool.query<Claimed>(
        `with claimed as (
           update webhook_deliveries set status = 'sending', claimed_by = $3, claimed_until = $1::bigint + $4::bigint where id in (
             select d.id ${CANDIDATES} and ${DUE} <= $1 order by ${DUE}, d.id limit $2
             for update of d skip locked)
           returning *)
         select c.*, w.url, w.secret from claimed c join webhooks w on w.id = c.webhook_id order by c.next_attempt_at, c.id`, [now, limit, me, claim.ttlMs])
      return result.rows
    },
    nextDueAt: async (): Promise<number | null> => {
      const r = await pool.query<{ at: number | null }>(`select min(${DUE}) as at ${CANDIDATES}`)
      return r.rows[0]?.at ?? null
    },
    succeeded: async (o: AttemptOutcome): Promise<void> => {
      await pool.query("update webhook_deliveries set status = 'succeeded', attempts = attempts + 1, last_attempt_at = $1, last_status_code = $2, last_error = null, completed_at = $1 where id = $3 and status = 'sending' and claimed_by = $4",
        [o.at, o.statusCode, o.id, me])
    },
    retry: async (o: AttemptOutcome, nextAt: number): Promise<void> => {
      await pool.query("update webhook_deliveries set status = 'pending', attempts = attempts + 1, last_attempt_at = $1, last_status_code = $2, last_error = $3, next_attempt_at = $4 where id = $5 and status = 'sending' and claimed_by = $6",
        [o.at, o.statusCode, o.error, nextAt, o.id, me])
    },
    failed: async (o: AttemptOutcome): Promise<void> => {
      await pool.query("update webhook_deliveries set status = 'failed', attempts = attempts + 1, last_attempt_at = $1, last_status_code = $2, last_error = $3, completed_at = $1 where id = $4 and status = 'sending' and claimed_by = $5",
        [o.at, o.statusCode, o.error, o.id, me])
    },
    release: async (id: number): Promise<void> => {
      await pool.query("update webhook_deliveries set status = 'pending' where id = $1 and status = 'sending' and claimed_by = $2", [id, me])
    },
    /** this node's claims a crash interrupted, and those claimed before claims were recorded */
    releaseAll: async (): Promise<number> => count(await pool.query(
      "update webhook_deliveries set status = 'pending' where status = 'sending' and (claimed_by = $1 or claimed_by is null)", [me])),
    disable: async (webhookId: string, reason: string, at: number): Promise<void> => {
      await pool.query('update webhooks set enabled = 0, disabled_reason = $1, updated_at = $2 where id = $3', [reason, at, webhookId])
    },
    requeue: async (webhookId: string, id: number, now: number): Promise<boolean> => count(await pool.query(
      "update webhook_deliveries set status = 'pending', attempts = 0, next_attempt_at = $1, completed_at = null where id = $2 and webhook_id = $3 and status != 'sending'",
      [now, id, webhookId])) > 0,
    prune: async (before: number): Promise<number> => count(await pool.query("delete from webhook_deliveries where created_at < $1 and status != 'sending'", [before])),
    pendingCount: (): number => { refreshCounts(); return counts.pending },
    failingCount: (): number => { refreshCounts(); return counts.failing }
  }
}
