import type SQLite from 'better-sqlite3'
import type { Insertable, Kysely, Updateable } from 'kysely'
import type { DbHandle } from '../connection.js'
import { pgWebhookOutbox, type DeliveryClaim } from './webhooks-pg.js'
import type { Database, DeliveryStatus, EventLogRow, WebhookDeliveryRow, WebhookRow, WebhookTable } from '../database.js'

type Db = Kysely<Database>

// Webhook endpoints (Kysely: rare writes) and their delivery outbox (prepared statements on the raw
// connection: written synchronously while an event is emitted, and polled by the delivery worker).

export async function insertWebhook (db: Db, row: Insertable<WebhookTable>): Promise<void> {
  await db.insertInto('webhooks').values(row).execute()
}

export async function findWebhook (db: Db, id: string): Promise<WebhookRow | undefined> {
  return await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function listWebhooks (db: Db): Promise<WebhookRow[]> {
  return await db.selectFrom('webhooks').selectAll().orderBy('created_at').orderBy('id').execute()
}

export async function updateWebhook (db: Db, id: string, patch: Updateable<WebhookTable>): Promise<WebhookRow | undefined> {
  return await db.updateTable('webhooks').set(patch).where('id', '=', id).returningAll().executeTakeFirst()
}

export async function deleteWebhook (db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}

export interface DeliveryPageQuery { status?: DeliveryStatus, limit: number, before?: number }

/** One endpoint's deliveries, newest first; `before` is the id the previous page ended with. */
export async function listDeliveries (db: Db, webhookId: string, q: DeliveryPageQuery): Promise<WebhookDeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId)
  if (q.status !== undefined) query = query.where('status', '=', q.status)
  if (q.before !== undefined) query = query.where('id', '<', q.before)
  return await query.orderBy('id', 'desc').limit(q.limit).execute()
}

export async function findDelivery (db: Db, webhookId: string, id: number): Promise<WebhookDeliveryRow | undefined> {
  return await db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).where('id', '=', id).executeTakeFirst()
}

/** Counts by status, per endpoint (for the list view and health). */
export async function deliveryCounts (db: Db): Promise<Array<{ webhook_id: string, status: DeliveryStatus, n: number }>> {
  return await db.selectFrom('webhook_deliveries')
    .select(['webhook_id', 'status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy(['webhook_id', 'status'])
    .execute()
}

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

/** An endpoint as the outbox sees it. */
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

/**
 * The outbox on the raw connection. A delivery is due when it is pending, its time has come, its endpoint
 * is enabled, and no earlier delivery with the same order key to the same endpoint is still pending or
 * being sent: so one status's events reach an endpoint in the order they happened.
 */
export function webhookOutbox (sqlite: SQLite.Database) {
  const subscribers = sqlite.prepare<[], Subscriber>('select id, events, session_id, key_id, enabled, updated_at from webhooks')
  const insert = sqlite.prepare<[string, string, string, string | null, string, string, number, number]>(
    'insert into webhook_deliveries (webhook_id, message_id, event_type, session_id, order_key, body, status, attempts, next_attempt_at, created_at) ' +
    "values (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?)"
  )
  const eligible = 'from webhook_deliveries d join webhooks w on w.id = d.webhook_id ' +
    "where d.status = 'pending' and w.enabled = 1 and not exists (" +
    '  select 1 from webhook_deliveries e where e.webhook_id = d.webhook_id and e.order_key = d.order_key and e.id < d.id' +
    "  and e.status in ('pending', 'sending'))"
  const due = sqlite.prepare<[number, number], WebhookDeliveryRow & { url: string, secret: string }>(
    `select d.*, w.url, w.secret ${eligible} and d.next_attempt_at <= ? order by d.next_attempt_at, d.id limit ?`
  )
  const nextDue = sqlite.prepare<[], number | null>(`select min(d.next_attempt_at) ${eligible}`).pluck()
  const claim = sqlite.prepare<[number]>("update webhook_deliveries set status = 'sending' where id = ? and status = 'pending'")
  const succeeded = sqlite.prepare<[number, number | null, number, number]>(
    "update webhook_deliveries set status = 'succeeded', attempts = attempts + 1, last_attempt_at = ?, last_status_code = ?, last_error = null, completed_at = ? where id = ? and status = 'sending'"
  )
  const retry = sqlite.prepare<[number, number | null, string | null, number, number]>(
    "update webhook_deliveries set status = 'pending', attempts = attempts + 1, last_attempt_at = ?, last_status_code = ?, last_error = ?, next_attempt_at = ? where id = ? and status = 'sending'"
  )
  const failed = sqlite.prepare<[number, number | null, string | null, number, number]>(
    "update webhook_deliveries set status = 'failed', attempts = attempts + 1, last_attempt_at = ?, last_status_code = ?, last_error = ?, completed_at = ? where id = ? and status = 'sending'"
  )
  const release = sqlite.prepare<[number]>("update webhook_deliveries set status = 'pending' where id = ? and status = 'sending'")
  const releaseAll = sqlite.prepare("update webhook_deliveries set status = 'pending' where status = 'sending'")
  const disable = sqlite.prepare<[string, number, string]>('update webhooks set enabled = 0, disabled_reason = ?, updated_at = ? where id = ?')
  const requeue = sqlite.prepare<[number, number, string]>(
    "update webhook_deliveries set status = 'pending', attempts = 0, next_attempt_at = ?, completed_at = null where id = ? and webhook_id = ? and status != 'sending'"
  )
  const prune = sqlite.prepare<[number]>("delete from webhook_deliveries where created_at < ? and status != 'sending'")
  const pendingCount = sqlite.prepare<[], number>("select count(*) from webhook_deliveries where status in ('pending', 'sending')").pluck()
  const failing = sqlite.prepare<[], number>(
    "select (select count(distinct webhook_id) from webhook_deliveries where status = 'pending' and attempts > 0) + " +
    '(select count(*) from webhooks where enabled = 0 and disabled_reason is not null)'
  ).pluck()

  const insertAll = sqlite.transaction((rows: NewDelivery[]) => {
    for (const r of rows) insert.run(r.webhookId, r.messageId, r.eventType, r.sessionId, r.orderKey, r.body, r.at, r.at)
  })
  const cursor = sqlite.prepare<[], number>("select last_id from event_cursors where name = 'webhooks'").pluck()
  const moveCursor = sqlite.prepare<[number]>("update event_cursors set last_id = ? where name = 'webhooks'")
  const logAfter = sqlite.prepare<[number, number], EventLogRow>('select * from event_log where id > ? order by id limit ?')
  const fromLog = sqlite.transaction((limit: number, build: DeliveriesOf): number => {
    const events = logAfter.all(cursor.get() ?? 0, limit)
    if (events.length === 0) return 0
    for (const r of build(events)) insert.run(r.webhookId, r.messageId, r.eventType, r.sessionId, r.orderKey, r.body, r.at, r.at)
    moveCursor.run(events[events.length - 1].id)
    return events.length
  })

  return {
    subscribers: () => subscribers.all(),
    /** commits every row before it returns (or joins the transaction the caller has open) */
    insert: (rows: NewDelivery[]): void => { if (rows.length > 0) insertAll(rows) },
    /**
     * The deliveries of up to `limit` logged events past the `webhooks` cursor, and the cursor moved past
     * them, in one transaction. Returns how many events it took (0: none left; -1: another node is at it).
     */
    fromLog: (limit: number, build: DeliveriesOf): number => fromLog(limit, build),
    /** marks up to `limit` due deliveries as sending and returns them with their endpoint's URL and secret */
    claimDue (now: number, limit: number): Array<WebhookDeliveryRow & { url: string, secret: string }> {
      if (limit <= 0) return []
      const rows = due.all(now, limit)
      return rows.filter((r) => claim.run(r.id).changes > 0)
    },
    /** the earliest time a delivery can be due (pending and not waiting for an earlier one), or null */
    nextDueAt: (): number | null => nextDue.get() ?? null,
    succeeded: (o: AttemptOutcome): void => { succeeded.run(o.at, o.statusCode, o.at, o.id) },
    retry: (o: AttemptOutcome, nextAt: number): void => { retry.run(o.at, o.statusCode, o.error, nextAt, o.id) },
    failed: (o: AttemptOutcome): void => { failed.run(o.at, o.statusCode, o.error, o.at, o.id) },
    /** back to pending without counting an attempt (shutdown interrupted it) */
    release: (id: number): void => { release.run(id) },
    /** at start: deliveries left `sending` by a crash go back to pending */
    releaseAll: (): number => releaseAll.run().changes,
    disable: (webhookId: string, reason: string, at: number): void => { disable.run(reason, at, webhookId) },
    /** pending again now with a fresh schedule; false when missing or being sent */
    requeue: (webhookId: string, id: number, now: number): boolean => requeue.run(now, id, webhookId).changes > 0,
    prune: (before: number): number => prune.run(before).changes,
    pendingCount: (): number => pendingCount.get() ?? 0,
    /** endpoints whose deliveries are being retried, plus those a 410 disabled */
    failingCount: (): number => failing.get() ?? 0
  }
}

/** The SQLite outbox (synchronous) or its PostgreSQL twin (webhooks-pg.ts, asynchronous). */
export type WebhookOutbox = ReturnType<typeof webhookOutbox> | ReturnType<typeof pgWebhookOutbox>

/** claim: who this node is and how long its claims hold (PostgreSQL; SQLite has one process, so none) */
export function webhookOutboxFor (handle: DbHandle, claim: DeliveryClaim): WebhookOutbox {
  return handle.dialect === 'sqlite' ? webhookOutbox(handle.sqlite) : pgWebhookOutbox(handle.pool, claim)
}
