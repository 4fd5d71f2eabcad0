import { sql, type Kysely } from 'kysely'
import type { Database, WebhookDeliveryRow } from '../database.js'
import { deliveriesFromLog, orderedInserts, outboxCounts, readSubscribers, toClaimedDelivery, type WebhookOutbox } from '../stores/webhook-outbox.js'

type Db = Kysely<Database>

// due: pending, endpoint enabled, no earlier delivery with its order key still waiting
const ELIGIBLE = sql`from webhook_deliveries d join webhooks w on w.id = d.webhook_id
  where d.status = 'pending' and w.enabled = 1 and not exists (
    select 1 from webhook_deliveries e where e.webhook_id = d.webhook_id and e.order_key = d.order_key and e.id < d.id
    and e.status in ('pending', 'sending'))`

/** SQLite: one process works the outbox; every operation goes through Kysely (one connection, serialised). */
export function webhookOutbox (db: Db): WebhookOutbox {
  return {
    subscribers: async () => await readSubscribers(db),
    insert: orderedInserts(db),
    fromLog: async (limit, of) => await db.transaction().execute(async (trx) => {
      const cursor = await trx.selectFrom('event_cursors').select('last_id').where('name', '=', 'webhooks').executeTakeFirst()
      return await deliveriesFromLog(trx, Number(cursor?.last_id ?? 0), limit, of)
    }),
    async claimDue (now, limit) {
      if (limit <= 0) return []
      return await db.transaction().execute(async (trx) => {
        const { rows } = await sql<WebhookDeliveryRow & { url: string, secret: string }>`select d.*, w.url, w.secret ${ELIGIBLE} and d.next_attempt_at <= ${now} order by d.next_attempt_at, d.id limit ${limit}`.execute(trx)
        if (rows.length === 0) return []
        await trx.updateTable('webhook_deliveries').set({ status: 'sending' }).where('id', 'in', rows.map((r) => r.id)).where('status', '=', 'pending').execute()
        return rows.map((r) => toClaimedDelivery({ ...r, status: 'sending' }))
      })
    },
    async nextDueAt () {
      const { rows } = await sql<{ at: number | null }>`select min(d.next_attempt_at) as at ${ELIGIBLE}`.execute(db)
      return rows[0]?.at === null || rows[0]?.at === undefined ? null : Number(rows[0].at)
    },
    async succeeded (o) {
      await db.updateTable('webhook_deliveries')
        .set((eb) => ({ status: 'succeeded', attempts: eb('attempts', '+', 1), last_attempt_at: o.at, last_status_code: o.statusCode, last_error: null, completed_at: o.at }))
        .where('id', '=', o.id).where('status', '=', 'sending').execute()
    },
    async retry (o, nextAt) {
      await db.updateTable('webhook_deliveries')
        .set((eb) => ({ status: 'pending', attempts: eb('attempts', '+', 1), last_attempt_at: o.at, last_status_code: o.statusCode, last_error: o.error, next_attempt_at: nextAt }))
        .where('id', '=', o.id).where('status', '=', 'sending').execute()
    },
    async failed (o) {
      await db.updateTable('webhook_deliveries')
        .set((eb) => ({ status: 'failed', attempts: eb('attempts', '+', 1), last_attempt_at: o.at, last_status_code: o.statusCode, last_error: o.error, completed_at: o.at }))
        .where('id', '=', o.id).where('status', '=', 'sending').execute()
    },
    async release (id) {
      await db.updateTable('webhook_deliveries').set({ status: 'pending' }).where('id', '=', id).where('status', '=', 'sending').execute()
    },
    async releaseAll () {
      const r = await db.updateTable('webhook_deliveries').set({ status: 'pending' }).where('status', '=', 'sending').executeTakeFirst()
      return Number(r.numUpdatedRows)
    },
    async disable (webhookId, reason, at) {
      await db.updateTable('webhooks').set({ enabled: 0, disabled_reason: reason, updated_at: at }).where('id', '=', webhookId).execute()
    },
    async requeue (webhookId, id, now) {
      const r = await db.updateTable('webhook_deliveries').set({ status: 'pending', attempts: 0, next_attempt_at: now, completed_at: null })
        .where('id', '=', id).where('webhook_id', '=', webhookId).where('status', '!=', 'sending').executeTakeFirst()
      return r.numUpdatedRows > 0n
    },
    async prune (before) {
      const r = await db.deleteFrom('webhook_deliveries').where('created_at', '<', before).where('status', '!=', 'sending').executeTakeFirst()
      return Number(r.numDeletedRows)
    },
    counts: async () => await outboxCounts(db)
  }
}
