import { sql, type Insertable, type Kysely, type Updateable } from 'kysely'
import type { DbHandle } from '../connection.js'
import type { Database, DeliveryStatus, WebhookDeliveryRow, WebhookRow, WebhookTable } from '../database.js'
import { pgWebhookOutbox } from './webhooks-pg.js'
import { deliveriesFromLog, orderedInserts, outboxCounts, readSubscribers, type ClaimedDelivery, type DeliveryClaim, type WebhookOutbox } from './webhook-outbox.js'

export type { AttemptOutcome, ClaimedDelivery, DeliveriesOf, DeliveryClaim, NewDelivery, Subscriber, WebhookOutbox } from './webhook-outbox.js'

// Webhook endpoints (rare writes) and their delivery outbox: rows written from the event log after its
// commit (and for the unlogged codes as they come), claimed and settled by the delivery worker.

type Db = Kysely<Database>

export interface DeliveryPageQuery { status?: DeliveryStatus, limit: number, before?: number }

export interface WebhookStore {
  /**
   * Several nodes share the endpoints and the outbox (PostgreSQL): endpoints are read again now and then,
   * and the log is looked at on a backstop. False: every change goes through this process.
   */
  readonly shared: boolean
  insert: (row: Insertable<WebhookTable>) => Promise<void>
  find: (id: string) => Promise<WebhookRow | undefined>
  list: () => Promise<WebhookRow[]>
  update: (id: string, patch: Updateable<WebhookTable>) => Promise<WebhookRow | undefined>
  remove: (id: string) => Promise<boolean>
  /** one endpoint's deliveries, newest first; `before` is the id the previous page ended with */
  deliveries: (webhookId: string, q: DeliveryPageQuery) => Promise<WebhookDeliveryRow[]>
  findDelivery: (webhookId: string, id: number) => Promise<WebhookDeliveryRow | undefined>
  /** the outbox as this node works it (`claim`: who it is, and how long its claims hold on a shared outbox) */
  outbox: (claim: DeliveryClaim) => WebhookOutbox
}

export function webhookStore (handle: DbHandle): WebhookStore {
  const db = handle.db
  return {
    shared: handle.dialect === 'postgres',
    async insert (row) { await db.insertInto('webhooks').values(row).execute() },
    find: async (id) => await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst(),
    list: async () => await db.selectFrom('webhooks').selectAll().orderBy('created_at').orderBy('id').execute(),
    update: async (id, patch) => await db.updateTable('webhooks').set(patch).where('id', '=', id).returningAll().executeTakeFirst(),
    async remove (id) {
      const result = await db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst()
      return result.numDeletedRows > 0n
    },
    async deliveries (webhookId, q) {
      let query = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId)
      if (q.status !== undefined) query = query.where('status', '=', q.status)
      if (q.before !== undefined) query = query.where('id', '<', q.before)
      return await query.orderBy('id', 'desc').limit(q.limit).execute()
    },
    findDelivery: async (webhookId, id) =>
      await db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst(),
    outbox: (claim) => handle.dialect === 'postgres' ? pgWebhookOutbox(db, claim) : sqliteWebhookOutbox(db)
  }
}

// due: pending, endpoint enabled, no earlier delivery with its order key still waiting
const ELIGIBLE = sql`from webhook_deliveries d join webhooks w on w.id = d.webhook_id
  where d.status = 'pending' and w.enabled = 1 and not exists (
    select 1 from webhook_deliveries e where e.webhook_id = d.webhook_id and e.order_key = d.order_key and e.id < d.id
    and e.status in ('pending', 'sending'))`

/** SQLite: one process works the outbox; every operation goes through Kysely (one connection, serialised). */
function sqliteWebhookOutbox (db: Db): WebhookOutbox {
  return {
    subscribers: async () => await readSubscribers(db),
    insert: orderedInserts(db),
    fromLog: async (limit, build) => await db.transaction().execute(async (trx) => {
      const cursor = await trx.selectFrom('event_cursors').select('last_id').where('name', '=', 'webhooks').executeTakeFirst()
      return await deliveriesFromLog(trx, Number(cursor?.last_id ?? 0), limit, build)
    }),
    async claimDue (now, limit) {
      if (limit <= 0) return []
      return await db.transaction().execute(async (trx) => {
        const { rows } = await sql<ClaimedDelivery>`select d.*, w.url, w.secret ${ELIGIBLE} and d.next_attempt_at <= ${now} order by d.next_attempt_at, d.id limit ${limit}`.execute(trx)
        if (rows.length === 0) return []
        await trx.updateTable('webhook_deliveries').set({ status: 'sending' }).where('id', 'in', rows.map((r) => r.id)).where('status', '=', 'pending').execute()
        return rows.map((r) => ({ ...r, status: 'sending' as const }))
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
