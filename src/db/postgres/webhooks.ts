import { sql, type Kysely } from 'kysely'
import type { Database, WebhookDeliveryRow } from '../database.js'
import { affected, deliveriesFromLog, orderedInserts, outboxCounts, readSubscribers, toClaimedDelivery, type DeliveryClaim, type WebhookOutbox } from '../stores/webhook-outbox.js'

// Deliveries that may go out now or later: pending ones, and `sending` ones another node claimed (they go
// out again once their claim has run out: that node died mid-attempt), when no earlier delivery with
// the same order key is still waiting. DUE is when each may go.
const CANDIDATES = sql`from webhook_deliveries d join webhooks w on w.id = d.webhook_id
  where (d.status = 'pending' or (d.status = 'sending' and d.claimed_until is not null)) and w.enabled = 1 and not exists (
    select 1 from webhook_deliveries e where e.webhook_id = d.webhook_id and e.order_key = d.order_key and e.id < d.id
    and e.status in ('pending', 'sending'))`
const DUE = sql`case when d.status = 'sending' then d.claimed_until else d.next_attempt_at end`

/**
 * The outbox on PostgreSQL, shared by several nodes: the same rows and rules as SQLite's. The claim marks
 * due rows `sending` by this node until now + ttlMs, in one statement that skips rows another node is
 * claiming (FOR UPDATE SKIP LOCKED), so several nodes can work one outbox without sending a delivery twice;
 * a row waiting for an earlier one with its order key stays waiting whichever node holds that one. Outcomes
 * are written only while the claim is still this node's; a node starting again puts back only its own
 * interrupted claims (another node's are its business until they run out).
 */
export function webhookOutbox (db: Kysely<Database>, claim: DeliveryClaim): WebhookOutbox {
  const me = claim.nodeId
  return {
    subscribers: async () => await readSubscribers(db),
    insert: orderedInserts(db),
    // the cursor row is locked (SKIP LOCKED: -1 when another node is at it), so one node at a time makes
    // deliveries, in event order
    fromLog: async (limit, of) => await db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ last_id: number }>`select last_id from event_cursors where name = 'webhooks' for update skip locked`.execute(trx)
      if (rows.length === 0) return -1
      return await deliveriesFromLog(trx, Number(rows[0].last_id), limit, of)
    }),
    async claimDue (now, limit) {
      if (limit <= 0) return []
      const { rows } = await sql<WebhookDeliveryRow & { url: string, secret: string }>`with claimed as (
          update webhook_deliveries set status = 'sending', claimed_by = ${me}, claimed_until = ${now}::bigint + ${claim.ttlMs}::bigint where id in (
            select d.id ${CANDIDATES} and ${DUE} <= ${now} order by ${DUE}, d.id limit ${limit}
            for update of d skip locked)
          returning *)
        select c.*, w.url, w.secret from claimed c join webhooks w on w.id = c.webhook_id order by c.next_attempt_at, c.id`.execute(db)
      return rows.map(toClaimedDelivery)
    },
    async nextDueAt () {
      const { rows } = await sql<{ at: number | null }>`select min(${DUE}) as at ${CANDIDATES}`.execute(db)
      return rows[0]?.at ?? null
    },
    async succeeded (o) {
      await sql`update webhook_deliveries set status = 'succeeded', attempts = attempts + 1, last_attempt_at = ${o.at}, last_status_code = ${o.statusCode},
        last_error = null, completed_at = ${o.at} where id = ${o.id} and status = 'sending' and claimed_by = ${me}`.execute(db)
    },
    async retry (o, nextAt) {
      await sql`update webhook_deliveries set status = 'pending', attempts = attempts + 1, last_attempt_at = ${o.at}, last_status_code = ${o.statusCode},
        last_error = ${o.error}, next_attempt_at = ${nextAt} where id = ${o.id} and status = 'sending' and claimed_by = ${me}`.execute(db)
    },
    async failed (o) {
      await sql`update webhook_deliveries set status = 'failed', attempts = attempts + 1, last_attempt_at = ${o.at}, last_status_code = ${o.statusCode},
        last_error = ${o.error}, completed_at = ${o.at} where id = ${o.id} and status = 'sending' and claimed_by = ${me}`.execute(db)
    },
    async release (id) {
      await sql`update webhook_deliveries set status = 'pending' where id = ${id} and status = 'sending' and claimed_by = ${me}`.execute(db)
    },
    // this node's claims a crash interrupted, and those claimed before claims were recorded
    releaseAll: async () => affected(await sql`update webhook_deliveries set status = 'pending'
      where status = 'sending' and (claimed_by = ${me} or claimed_by is null)`.execute(db)),
    async disable (webhookId, reason, at) {
      await db.updateTable('webhooks').set({ enabled: 0, disabled_reason: reason, updated_at: at }).where('id', '=', webhookId).execute()
    },
    requeue: async (webhookId, id, now) => affected(await sql`update webhook_deliveries set status = 'pending', attempts = 0, next_attempt_at = ${now},
      completed_at = null where id = ${id} and webhook_id = ${webhookId} and status != 'sending'`.execute(db)) > 0,
    prune: async (before) => affected(await sql`delete from webhook_deliveries where created_at < ${before} and status != 'sending'`.execute(db)),
    counts: async () => await outboxCounts(db)
  }
}
