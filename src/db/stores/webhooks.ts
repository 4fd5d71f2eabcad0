import { sql, type Insertable, type Kysely, type Updateable } from 'kysely'
import type { DbHandle } from '../connection.js'
import type { Database, DeliveryStatus, EventLogRow, WebhookDeliveryRow, WebhookRow, WebhookTable } from '../database.js'
import { pgWebhookOutbox } from './webhooks-pg.js'

// Webhook endpoints (rare writes) and their delivery outbox: rows written from the event log after its
// commit (and for the unlogged codes as they come), claimed and settled by the delivery worker.

type Db = Kysely<Database>

export interface DeliveryPageQuery { status?: DeliveryStatus, limit: number, before?: number }

export interface NewDelivery {
  webhookId: string
  messageId: string
  eventType: string
  sessionId: string | null
  orderKey: string
  body: string
  at: number
}

/** The deliveries (one per matching endpoint) of logged events, in the events' order. */
export type DeliveriesOf = (events: EventLogRow[]) => NewDelivery[]

/**
 * An endpoint that takes events: the enabled ones, and the disabled ones with when they were disabled
 * (`updated_at`), since an event that happened before that is still theirs.
 */
export interface Subscriber {
  id: string
  events: string | null
  session_id: string | null
  key_id: string | null
  enabled: number
  updated_at: number | string
}

export interface AttemptOutcome {
  id: number
  at: number
  statusCode: number | null
  error: string | null
}

/** A delivery claimed for sending, with its endpoint's URL and secret. */
export type ClaimedDelivery = WebhookDeliveryRow & { url: string, secret: string }

/** Who claims deliveries from the outbox, and for how long a claim holds without an outcome (several nodes). */
export interface DeliveryClaim {
  nodeId: string
  ttlMs: number
}

/**
 * The outbox. A delivery is due when it is pending, its time has come, its endpoint is enabled, and no
 * earlier delivery with the same order key to the same endpoint is still pending or being sent: so one
 * status's events reach an endpoint in the order they happened.
 */
export interface WebhookOutbox {
  subscribers: () => Promise<Subscriber[]>
  /** commits every row (in the order the calls came: ids follow the events' order) */
  insert: (rows: NewDelivery[]) => Promise<void>
  /**
   * The deliveries of up to `limit` logged events past the `webhooks` cursor, and the cursor moved past
   * them, in one transaction. How many events it took (0: none left; -1: another node is at it).
   */
  fromLog: (limit: number, build: DeliveriesOf) => Promise<number>
  /** marks up to `limit` due deliveries as sending and returns them */
  claimDue: (now: number, limit: number) => Promise<ClaimedDelivery[]>
  /** the earliest time a delivery can be due (pending and not waiting for an earlier one), or null */
  nextDueAt: () => Promise<number | null>
  succeeded: (o: AttemptOutcome) => Promise<void>
  retry: (o: AttemptOutcome, nextAt: number) => Promise<void>
  failed: (o: AttemptOutcome) => Promise<void>
  /** back to pending without counting an attempt (shutdown interrupted it) */
  release: (id: number) => Promise<void>
  /** at start: deliveries a crash left `sending` (this node's) go back to pending */
  releaseAll: () => Promise<number>
  disable: (webhookId: string, reason: string, at: number) => Promise<void>
  /** pending again now with a fresh schedule; false when missing or being sent */
  requeue: (webhookId: string, id: number, now: number) => Promise<boolean>
  prune: (before: number) => Promise<number>
  /** deliveries waiting (pending or being sent), and endpoints failing (retrying, or disabled by a 410) */
  counts: () => Promise<{ pending: number, failing: number }>
}

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

/** Rows per insert statement (SQLite caps a statement's variables). */
const INSERT_CHUNK = 500

/** One multi-row insert per chunk, inside the caller's transaction. */
async function insertDeliveries (trx: Db, rows: NewDelivery[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await trx.insertInto('webhook_deliveries').values(rows.slice(i, i + INSERT_CHUNK).map((r) => ({
      webhook_id: r.webhookId,
      message_id: r.messageId,
      event_type: r.eventType,
      session_id: r.sessionId,
      order_key: r.orderKey,
      body: r.body,
      status: 'pending' as const,
      attempts: 0,
      next_attempt_at: r.at,
      created_at: r.at
    }))).execute()
  }
}

/** rows a raw statement changed */
export const affected = (r: { numAffectedRows?: bigint }): number => Number(r.numAffectedRows ?? 0n)

/** Subscribers, both dialects. */
export async function readSubscribers (db: Db): Promise<Subscriber[]> {
  return await db.selectFrom('webhooks').select(['id', 'events', 'session_id', 'key_id', 'enabled', 'updated_at']).execute()
}

/** The deliveries of logged events past the cursor, in the caller's transaction (the cursor read as `lastId`). */
export async function deliveriesFromLog (trx: Db, lastId: number, limit: number, build: DeliveriesOf): Promise<number> {
  const events = await trx.selectFrom('event_log').selectAll().where('id', '>', lastId).orderBy('id').limit(limit).execute()
  if (events.length === 0) return 0
  await insertDeliveries(trx, build(events))
  await trx.updateTable('event_cursors').set({ last_id: Number(events[events.length - 1].id) }).where('name', '=', 'webhooks').execute()
  return events.length
}

/** Inserts one call after another, in the order asked. */
export function orderedInserts (db: Db): (rows: NewDelivery[]) => Promise<void> {
  let inserts: Promise<void> = Promise.resolve()
  return async (rows) => {
    if (rows.length === 0) return
    const mine = inserts.then(async () => { await db.transaction().execute(async (trx) => { await insertDeliveries(trx, rows) }) })
    inserts = mine.catch(() => {})
    await mine
  }
}

export async function outboxCounts (db: Db): Promise<{ pending: number, failing: number }> {
  const { rows } = await sql<{ pending: number | string, failing: number | string }>`select
    (select count(*) from webhook_deliveries where status in ('pending', 'sending')) as pending,
    (select count(distinct webhook_id) from webhook_deliveries where status = 'pending' and attempts > 0) +
    (select count(*) from webhooks where enabled = 0 and disabled_reason is not null) as failing`.execute(db)
  return { pending: Number(rows[0].pending), failing: Number(rows[0].failing) }
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
