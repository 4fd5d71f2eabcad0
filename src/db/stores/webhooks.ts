import type { Insertable, Kysely, Updateable } from 'kysely'
import type { Database, DeliveryStatus, WebhookDeliveryRow, WebhookRow, WebhookTable } from '../database.js'
import type { DeliveryClaim, WebhookOutbox } from './webhook-outbox.js'

export type { AttemptOutcome, ClaimedDelivery, DeliveriesOf, DeliveryClaim, NewDelivery, Subscriber, WebhookOutbox } from './webhook-outbox.js'

/** A webhook endpoint: the port's own type, which plugins import (never the table's row type). */
export type WebhookRecord = WebhookRow
/** One delivery of an event to an endpoint, and where it stands: the port's own type, which plugins import (never the table's row type). */
export type WebhookDeliveryRecord = WebhookDeliveryRow
export type { DeliveryStatus } from '../database.js'

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
  find: (id: string) => Promise<WebhookRecord | undefined>
  list: () => Promise<WebhookRecord[]>
  update: (id: string, patch: Updateable<WebhookTable>) => Promise<WebhookRecord | undefined>
  remove: (id: string) => Promise<boolean>
  /** one endpoint's deliveries, newest first; `before` is the id the previous page ended with */
  deliveries: (webhookId: string, q: DeliveryPageQuery) => Promise<WebhookDeliveryRecord[]>
  findDelivery: (webhookId: string, id: number) => Promise<WebhookDeliveryRecord | undefined>
  /** the outbox as this node works it (`claim`: who it is, and how long its claims hold on a shared outbox) */
  outbox: (claim: DeliveryClaim) => WebhookOutbox
}

/** What differs per backend: whether nodes share the outbox, and the outbox (src/db/sqlite/webhooks.ts, src/db/postgres/webhooks.ts). */
export interface WebhookBackend { shared: boolean, outbox: (claim: DeliveryClaim) => WebhookOutbox }

export function webhookStore (db: Db, backend: WebhookBackend): WebhookStore {
  return {
    shared: backend.shared,
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
    outbox: backend.outbox
  }
}
