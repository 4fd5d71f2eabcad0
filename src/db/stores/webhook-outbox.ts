import { sql, type Kysely } from 'kysely'
import type { Database, WebhookDeliveryRow } from '../database.js'
import { LOGGED_EVENT_HEAD_COLUMNS, type LoggedEvent } from './events.js'

// The webhook outbox's port and the queries both backends' outboxes share (src/db/sqlite/webhooks.ts: one
// process; src/db/postgres/webhooks.ts: several nodes claiming).

type Db = Kysely<Database>

export interface NewDelivery {
  webhookId: string
  messageId: string
  eventType: string
  sessionId: string | null
  orderKey: string
  body: string
  at: number
}

/** A logged event without its payload: enough to tell whether any endpoint takes it. */
export type LoggedEventHead = Omit<LoggedEvent, 'data'>

/** The deliveries (one per matching endpoint) of logged events, in the events' order. */
export interface DeliveriesOf {
  /**
   * whether any endpoint takes the event: only those events' payloads are read (a status-viewers-update
   * carries a status's whole list, hundreds of kilobytes, and is read after every commit otherwise)
   */
  takes: (event: LoggedEventHead) => boolean
  build: (events: LoggedEvent[]) => NewDelivery[]
}

/**
 * An endpoint that takes events: the enabled ones, and the disabled ones with when they were disabled
 * (`updatedAt`), since an event that happened before that is still theirs.
 */
export interface Subscriber {
  id: string
  /** JSON array of event names; null: every event */
  events: string | null
  sessionId: string | null
  keyId: string | null
  enabled: boolean
  updatedAt: number
}

/** Where a delivery stands (the table's column holds the same; toWebhookDelivery fails to compile if they part). */
export type DeliveryStatus = 'pending' | 'sending' | 'succeeded' | 'failed'

/** One delivery of an event to an endpoint, and where it stands (the port's own type; plugins never see the table's row). */
export interface WebhookDelivery {
  id: number
  webhookId: string
  /** the `webhook-id` header: the same on every attempt, so receivers can drop duplicates */
  messageId: string
  eventType: string
  sessionId: string | null
  /** deliveries with the same key (one status, or one session's other events) are sent in id order */
  orderKey: string
  /** the JSON body, fixed when the event happened */
  body: string
  status: DeliveryStatus
  attempts: number
  nextAttemptAt: number
  lastAttemptAt: number | null
  lastStatusCode: number | null
  lastError: string | null
  createdAt: number
  completedAt: number | null
}

/** The one row → WebhookDelivery mapping, for both backends (the claim's rows carry the endpoint's url and secret too). */
export function toWebhookDelivery (r: WebhookDeliveryRow): WebhookDelivery {
  return {
    id: Number(r.id),
    webhookId: r.webhook_id,
    messageId: r.message_id,
    eventType: r.event_type,
    sessionId: r.session_id,
    orderKey: r.order_key,
    body: r.body,
    status: r.status,
    attempts: Number(r.attempts),
    nextAttemptAt: Number(r.next_attempt_at),
    lastAttemptAt: r.last_attempt_at === null ? null : Number(r.last_attempt_at),
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: Number(r.created_at),
    completedAt: r.completed_at === null ? null : Number(r.completed_at)
  }
}

export interface AttemptOutcome {
  id: number
  at: number
  statusCode: number | null
  error: string | null
}

/** A delivery claimed for sending, with its endpoint's URL and secret. */
export interface ClaimedDelivery extends WebhookDelivery { url: string, secret: string }

/** A claimed row (the delivery's columns and its endpoint's url and secret) as the port hands it out. */
export function toClaimedDelivery (r: WebhookDeliveryRow & { url: string, secret: string }): ClaimedDelivery {
  return { ...toWebhookDelivery(r), url: r.url, secret: r.secret }
}

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
  fromLog: (limit: number, of: DeliveriesOf) => Promise<number>
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
  const rows = await db.selectFrom('webhooks').select(['id', 'events', 'session_id', 'key_id', 'enabled', 'updated_at']).execute()
  return rows.map((r) => ({
    id: r.id, events: r.events, sessionId: r.session_id, keyId: r.key_id, enabled: Number(r.enabled) === 1, updatedAt: Number(r.updated_at)
  }))
}

/** The deliveries of logged events past the cursor, in the caller's transaction (the cursor read as `lastId`). */
export async function deliveriesFromLog (trx: Db, lastId: number, limit: number, of: DeliveriesOf): Promise<number> {
  const heads = await trx.selectFrom('event_log').select(LOGGED_EVENT_HEAD_COLUMNS).where('id', '>', lastId).orderBy('id').limit(limit).execute()
  if (heads.length === 0) return 0
  const taken = heads.filter((h) => of.takes(h))
  if (taken.length > 0) {
    const rows = await trx.selectFrom('event_log').select(['id', 'data']).where('id', 'in', taken.map((h) => h.id)).execute()
    const data = new Map(rows.map((r) => [Number(r.id), r.data]))
    await insertDeliveries(trx, of.build(taken.map((h) => ({ ...h, data: data.get(Number(h.id)) ?? '{}' }))))
  }
  await trx.updateTable('event_cursors').set({ last_id: Number(heads[heads.length - 1].id) }).where('name', '=', 'webhooks').execute()
  return heads.length
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
