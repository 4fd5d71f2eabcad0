import type { Kysely, Updateable } from 'kysely'
import type { Database, WebhookRow, WebhookTable } from '../database.js'
import { toWebhookDelivery, type DeliveryClaim, type DeliveryStatus, type WebhookDelivery, type WebhookOutbox } from './webhook-outbox.js'

export type { AttemptOutcome, ClaimedDelivery, DeliveriesOf, DeliveryClaim, LoggedEventHead, DeliveryStatus, NewDelivery, Subscriber, WebhookDelivery, WebhookOutbox } from './webhook-outbox.js'

/** A webhook endpoint (the port's own type; plugins never see the table's row). */
export interface Webhook {
  /** `wh_` + random */
  id: string
  url: string
  /** JSON array of event names; null: every event */
  events: string | null
  /** only this session's events; null: every session */
  sessionId: string | null
  description: string | null
  /** `whsec_` + base64 of 24 random bytes (Standard Webhooks) */
  secret: string
  enabled: boolean
  /** why the service disabled it (410 Gone), null when enabled or disabled by a user */
  disabledReason: string | null
  createdAt: number
  updatedAt: number
  /** the scoped key that created it: it receives only that key's sessions' events; null: made with the admin key */
  keyId: string | null
}

/** What an update may change (`updatedAt` always). */
export type WebhookPatch = Partial<Pick<Webhook, 'url' | 'events' | 'description' | 'secret' | 'enabled' | 'disabledReason'>> & { updatedAt: number }

/** The one row → Webhook mapping, for both backends. */
export function toWebhook (r: WebhookRow): Webhook {
  return {
    id: r.id,
    url: r.url,
    events: r.events,
    sessionId: r.session_id,
    description: r.description,
    secret: r.secret,
    enabled: Number(r.enabled) === 1,
    disabledReason: r.disabled_reason,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    keyId: r.key_id
  }
}

function toWebhookRow (w: Webhook): WebhookRow {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    session_id: w.sessionId,
    description: w.description,
    secret: w.secret,
    enabled: w.enabled ? 1 : 0,
    disabled_reason: w.disabledReason,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
    key_id: w.keyId
  }
}

function toWebhookUpdate (p: WebhookPatch): Updateable<WebhookTable> {
  return {
    updated_at: p.updatedAt,
    ...(p.url !== undefined ? { url: p.url } : {}),
    ...(p.events !== undefined ? { events: p.events } : {}),
    ...(p.description !== undefined ? { description: p.description } : {}),
    ...(p.secret !== undefined ? { secret: p.secret } : {}),
    ...(p.enabled !== undefined ? { enabled: p.enabled ? 1 : 0 } : {}),
    ...(p.disabledReason !== undefined ? { disabled_reason: p.disabledReason } : {})
  }
}

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
  insert: (webhook: Webhook) => Promise<void>
  find: (id: string) => Promise<Webhook | undefined>
  list: () => Promise<Webhook[]>
  /** the endpoint as updated, or undefined when missing */
  update: (id: string, patch: WebhookPatch) => Promise<Webhook | undefined>
  remove: (id: string) => Promise<boolean>
  /** one endpoint's deliveries, newest first; `before` is the id the previous page ended with */
  deliveries: (webhookId: string, q: DeliveryPageQuery) => Promise<WebhookDelivery[]>
  findDelivery: (webhookId: string, id: number) => Promise<WebhookDelivery | undefined>
  /** the outbox as this node works it (`claim`: who it is, and how long its claims hold on a shared outbox) */
  outbox: (claim: DeliveryClaim) => WebhookOutbox
}

/** What differs per backend: whether nodes share the outbox, and the outbox (src/db/sqlite/webhooks.ts, src/db/postgres/webhooks.ts). */
export interface WebhookBackend { shared: boolean, outbox: (claim: DeliveryClaim) => WebhookOutbox }

export function webhookStore (db: Db, backend: WebhookBackend): WebhookStore {
  return {
    shared: backend.shared,
    async insert (webhook) { await db.insertInto('webhooks').values(toWebhookRow(webhook)).execute() },
    find: async (id) => {
      const row = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst()
      return row === undefined ? undefined : toWebhook(row)
    },
    list: async () => (await db.selectFrom('webhooks').selectAll().orderBy('created_at').orderBy('id').execute()).map(toWebhook),
    update: async (id, patch) => {
      const row = await db.updateTable('webhooks').set(toWebhookUpdate(patch)).where('id', '=', id).returningAll().executeTakeFirst()
      return row === undefined ? undefined : toWebhook(row)
    },
    async remove (id) {
      const result = await db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst()
      return result.numDeletedRows > 0n
    },
    async deliveries (webhookId, q) {
      let query = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId)
      if (q.status !== undefined) query = query.where('status', '=', q.status)
      if (q.before !== undefined) query = query.where('id', '<', q.before)
      return (await query.orderBy('id', 'desc').limit(q.limit).execute()).map(toWebhookDelivery)
    },
    findDelivery: async (webhookId, id) => {
      const row = await db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst()
      return row === undefined ? undefined : toWebhookDelivery(row)
    },
    outbox: backend.outbox
  }
}
