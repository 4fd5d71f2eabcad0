import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { DbHandle } from '../../src/db/connection.js'
import type { Database, EventLogRow } from '../../src/db/database.js'
import { appendEvents, eventsAfter, lastEventId, pruneEvents, sqliteEventLog, type EventFilter, type NewEvent } from '../../src/db/repositories/events.js'
import type { EventName, EventPayloads } from '../../schemas/events.js'

/** Not stored: codes are secrets of the moment, useless (and risky) to replay. */
export const EPHEMERAL_EVENTS = ['pairing-code', 'pairing-code-error', 'qr-code', 'qr-code-error'] as const
export type EphemeralEventName = typeof EPHEMERAL_EVENTS[number]
/** Every other event reports a committed change and goes through the log. */
export type LoggedEventName = Exclude<EventName, EphemeralEventName>

/** One logged event as clients see it (GET /api/events; socket.io payloads are `{ ...data, eventId }`). */
export interface LogEntry {
  eventId: number
  type: LoggedEventName
  timestamp: string
  sessionId: string | null
  data: Record<string, unknown>
}

/** Records an event in the transaction at hand; it is written when the transaction's work is done. */
export type Emit = <K extends LoggedEventName>(event: K, payload: EventPayloads[K]) => void

/** The feed reads this many rows at a time. */
const PAGE = 500
/** PostgreSQL: how often the feed looks for rows other nodes committed (this node's own commits wake it at once). */
export const FEED_POLL_MS = 250

export function toLogRow<K extends LoggedEventName> (event: K, payload: EventPayloads[K], at = Date.now()): NewEvent {
  const sessionId = (payload as { sessionId?: unknown }).sessionId
  return { type: event, sessionId: typeof sessionId === 'string' ? sessionId : null, at, data: JSON.stringify(payload) }
}

export function toEntry (row: EventLogRow): LogEntry {
  return {
    eventId: Number(row.id),
    type: row.type as LoggedEventName,
    timestamp: new Date(Number(row.created_at)).toISOString(),
    sessionId: row.session_id,
    data: JSON.parse(row.data) as Record<string, unknown>
  }
}

export interface EventLogDeps {
  db: DbHandle
  log: FastifyBaseLogger
  retentionMs: number
  pruneIntervalMs: number
}

/**
 * The event log: appends (in the change's transaction, or on their own), and the feed, which hands every
 * committed row to its listeners once, in id order (the broadcaster's socket.io emits, the webhook
 * dispatcher's wake-up, the in-process domain event listeners). On SQLite the feed reads synchronously right
 * after each commit, so listeners hear of a change before the call that made it returns; on PostgreSQL it
 * reads after this node's commits and every FEED_POLL_MS for other nodes' (it sees every node's rows).
 * The feed starts at the log's end: older rows are for catch-up.
 */
export function createEventLog (deps: EventLogDeps) {
  const { db: handle, log } = deps
  const db = handle.db
  const raw = handle.dialect === 'sqlite' ? { sqlite: handle.sqlite, log: sqliteEventLog(handle.sqlite) } : null
  const listeners = new Set<(entry: LogEntry) => void>()
  /** the last id handed to the listeners */
  let cursor = 0
  let started = false
  let stopped = false
  let reading = false
  let again = false
  let waiting = false
  let poll: NodeJS.Timeout | null = null
  let prune: NodeJS.Timeout | null = null
  /** appends on their own, queued (PostgreSQL, or SQLite while another transaction is open) */
  let appends: Promise<void> = Promise.resolve()

  function deliver (rows: EventLogRow[]): void {
    for (const row of rows) {
      if (Number(row.id) <= cursor) continue
      cursor = Number(row.id)
      const entry = toEntry(row)
      for (const listener of listeners) {
        try { listener(entry) } catch (err) { log.error({ err, event: entry.type }, 'event log listener threw') }
      }
    }
  }

  /** Reads what was committed past the cursor and hands it out. */
  function feed (): void {
    if (!started || stopped) return
    if (raw !== null) {
      // a Kysely transaction open on the one connection would let us read its uncommitted rows: after it
      if (raw.sqlite.inTransaction) {
        if (!waiting) { waiting = true; setImmediate(() => { waiting = false; feed() }) }
        return
      }
      for (;;) {
        const rows = raw.log.after(cursor, PAGE)
        deliver(rows)
        if (rows.length < PAGE) return
      }
    }
    if (reading) { again = true; return }
    reading = true
    eventsAfter(db, cursor, PAGE).then((rows) => {
      deliver(rows)
      reading = false
      if (rows.length === PAGE || again) { again = false; feed() }
    }, (err: unknown) => {
      reading = false
      log.error({ err }, 'reading the event log failed')
    })
  }

  /** Appends one event in its own transaction. SQLite: committed and fed when this returns. */
  function append<K extends LoggedEventName> (event: K, payload: EventPayloads[K]): void | Promise<void> {
    const row = toLogRow(event, payload)
    if (raw !== null && !raw.sqlite.inTransaction) {
      raw.log.append([row])
      feed()
      return
    }
    // one after another, in the order asked: two emits in a row get ids in that order
    const mine = appends.then(async () => { await db.transaction().execute(async (trx) => { await appendEvents(trx, handle.dialect, [row]) }) })
    appends = mine.catch(() => {})
    return mine.then(() => { feed() })
  }

  /**
   * Runs `work` in one transaction; the events it emits are appended at its end, in the same
   * transaction, and fed after the commit. Nothing is appended when `work` throws.
   */
  async function within<T> (work: (trx: Kysely<Database>, emit: Emit) => Promise<T>): Promise<T> {
    const rows: NewEvent[] = []
    const emit: Emit = (event, payload) => { rows.push(toLogRow(event, payload)) }
    const result = await db.transaction().execute(async (trx) => {
      const value = await work(trx, emit)
      await appendEvents(trx, handle.dialect, rows)
      return value
    })
    if (rows.length > 0) feed()
    return result
  }

  return {
    append,
    within,
    /** a hot path appended in its own transaction (viewer-ingest, send progress, session links): feed what it committed */
    committed: feed,
    /** resolves once the appends queued on their own so far are written (a write that appends in its own transaction after them waits for it) */
    appended: async (): Promise<void> => { await appends },
    /** listens to every committed event, in id order */
    onEvent (listener: (entry: LogEntry) => void): void { listeners.add(listener) },
    offEvent (listener: (entry: LogEntry) => void): void { listeners.delete(listener) },
    /** the last id the feed handed out: every event up to it has gone to the listeners, none after it */
    head: (): number => cursor,
    /** events after `after`, in id order */
    page: async (after: number, limit: number, filter: EventFilter = {}): Promise<LogEntry[]> => (await eventsAfter(db, after, limit, filter)).map(toEntry),
    /** removes events past retention (never ones the webhook dispatcher has not passed) */
    prune: async (now = Date.now()): Promise<number> => await pruneEvents(db, now - deps.retentionMs),
    async start (): Promise<void> {
      cursor = await lastEventId(db)
      started = true
      if (handle.dialect === 'postgres') {
        poll = setInterval(feed, FEED_POLL_MS)
        poll.unref()
      }
      const pruneNow = (): void => {
        pruneEvents(db, Date.now() - deps.retentionMs).then((n) => { if (n > 0) log.info({ removed: n }, 'old events removed from the event log') },
          (err: unknown) => { log.error({ err }, 'removing old events failed') })
      }
      pruneNow()
      prune = setInterval(pruneNow, deps.pruneIntervalMs)
      prune.unref()
    },
    stop (): void {
      stopped = true
      if (poll !== null) clearInterval(poll)
      if (prune !== null) clearInterval(prune)
    }
  }
}

export type EventLog = ReturnType<typeof createEventLog>
