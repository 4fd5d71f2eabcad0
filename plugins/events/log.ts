import type { FastifyBaseLogger } from 'fastify'
import type { LoggedEvent } from '../../src/db/stores/events.js'
import type { EventFilter, EventStore, NewEvent } from '../../src/db/stores/events.js'
import type { Transactors, UnitOfWork } from '../../src/db/stores/transaction.js'
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
/** appends on their own written together, at most */
const APPEND_BATCH = 1000
/** A shared log (several nodes): how often the feed looks for rows other nodes committed (this node's own commits wake it at once). */
export const FEED_POLL_MS = 250

export function toLogRow<K extends LoggedEventName> (event: K, payload: EventPayloads[K], at = Date.now()): NewEvent {
  const sessionId = (payload as { sessionId?: unknown }).sessionId
  return { type: event, sessionId: typeof sessionId === 'string' ? sessionId : null, at, data: JSON.stringify(payload) }
}

export function toEntry (row: LoggedEvent): LogEntry {
  return {
    eventId: Number(row.id),
    type: row.type as LoggedEventName,
    timestamp: new Date(Number(row.createdAt)).toISOString(),
    sessionId: row.sessionId,
    data: JSON.parse(row.data) as Record<string, unknown>
  }
}

export interface EventLogDeps {
  store: EventStore
  /** the stores' unit of work (`within` runs its change in one) */
  transaction: UnitOfWork
  log: FastifyBaseLogger
  retentionMs: number
  pruneIntervalMs: number
}

/**
 * The event log: appends (in the change's transaction, or on their own), and the feed, which hands every
 * committed row to its listeners once, in id order (the broadcaster's socket.io emits, the webhook
 * dispatcher's wake-up, the in-process domain event listeners). The feed reads after each of this
 * process's commits (`append` and `within` resolve once their events went to the listeners) and, when the
 * log is shared with other nodes, every FEED_POLL_MS for theirs. A read never sees a transaction's rows
 * before its commit (the store's reads wait for an open transaction). The feed starts at the log's end:
 * older rows are for catch-up.
 */
export function createEventLog (deps: EventLogDeps) {
  const { store, log } = deps
  const listeners = new Set<(entry: LogEntry) => void>()
  /** the last id handed to the listeners */
  let cursor = 0
  let started = false
  let stopped = false
  /** the read under way, and the one queued after it (it covers the commits made while the first reads) */
  let reading: Promise<void> | null = null
  let queued: Promise<void> | null = null
  let poll: NodeJS.Timeout | null = null
  let prune: NodeJS.Timeout | null = null
  /** appends on their own, queued: two emits in a row get ids in that order */
  let appends: Promise<void> = Promise.resolve()
  /** per session, the queue as it stood after its last append on its own not written yet */
  const sessionAppends = new Map<string, Promise<void>>()

  function deliver (rows: LoggedEvent[]): void {
    for (const row of rows) {
      if (Number(row.id) <= cursor) continue
      cursor = Number(row.id)
      const entry = toEntry(row)
      for (const listener of listeners) {
        try { listener(entry) } catch (err) { log.error({ err, event: entry.type }, 'event log listener threw') }
      }
    }
  }

  async function readAll (): Promise<void> {
    try {
      for (;;) {
        const rows = await store.after(cursor, PAGE)
        deliver(rows)
        if (rows.length < PAGE) return
      }
    } catch (err) {
      log.error({ err }, 'reading the event log failed')
    }
  }

  /**
   * Reads what was committed past the cursor and hands it out; resolves once every commit made before the
   * call went to the listeners (never rejects: a failed read is logged, the next one catches up).
   */
  function feed (): Promise<void> {
    if (!started || stopped) return Promise.resolve()
    if (queued !== null) return queued
    if (reading === null) {
      reading = readAll().finally(() => { reading = null })
      return reading
    }
    queued = reading.then(async () => { queued = null; await feed() })
    return queued
  }

  /**
   * The rows waiting for the append under way: written together, in order, by the next transaction. Appends on
   * their own come in bursts (every session's `connection-status` as a node opens or takes over dozens), and one
   * transaction each, one after the other, made the last of 50 logins wait for 49 commits before its own.
   */
  let waiting: { rows: NewEvent[], written: Promise<void> } | null = null
  function enqueue (row: NewEvent): Promise<void> {
    let batch = waiting
    // a full batch waits its turn as it is (PostgreSQL's insert takes four parameters a row, at most 65,535)
    if (batch === null || batch.rows.length >= APPEND_BATCH) {
      const rows: NewEvent[] = []
      const written = appends.then(async () => {
        // rows that come from now on wait for the next transaction
        if (waiting?.rows === rows) waiting = null
        await store.append(rows)
      })
      batch = waiting = { rows, written }
      appends = written.catch(() => {})
    }
    batch.rows.push(row)
    return batch.written
  }

  /**
   * Appends one event in a transaction of its own (with the others appended on their own meanwhile, in
   * order); resolves once it is committed and went to the listeners.
   */
  async function append<K extends LoggedEventName> (event: K, payload: EventPayloads[K]): Promise<void> {
    const row = toLogRow(event, payload)
    const mine = enqueue(row)
    const queued = mine.catch(() => {})
    const sessionId = row.sessionId
    if (sessionId !== null) {
      sessionAppends.set(sessionId, queued)
      void queued.then(() => { if (sessionAppends.get(sessionId) === queued) sessionAppends.delete(sessionId) })
    }
    await mine
    await feed()
  }

  /**
   * Runs `work` in one transaction; the events it emits are appended at its end, in the same
   * transaction, and go to the listeners after the commit, before this resolves. Nothing is appended when
   * `work` throws.
   */
  async function within<T> (work: (tx: Transactors, emit: Emit) => Promise<T>): Promise<T> {
    const rows: NewEvent[] = []
    const emit: Emit = (event, payload) => { rows.push(toLogRow(event, payload)) }
    const result = await deps.transaction(async (tx) => {
      const value = await work(tx, emit)
      // last in the transaction: PostgreSQL's log lock is held only for the append and the commit
      await tx.events.append(rows)
      return value
    })
    if (rows.length > 0) await feed()
    return result
  }

  const pruneNow = (): void => {
    store.prune(Date.now() - deps.retentionMs).then((n) => { if (n > 0) log.info({ removed: n }, 'old events removed from the event log') },
      (err: unknown) => { log.error({ err }, 'removing old events failed') })
  }

  return {
    append,
    within,
    /** a hot path appended in its own transaction (viewer-ingest, send progress, session links): feed what it committed */
    committed (): void { void feed() },
    /**
     * Resolves once the appends queued on their own so far are written (a write that appends in its own
     * transaction after them waits for it); `sessionId`: once that session's are (another session's appends,
     * queued behind by a busy one, do not hold a link write up).
     */
    appended: async (sessionId?: string): Promise<void> => { await (sessionId === undefined ? appends : sessionAppends.get(sessionId)) },
    /** listens to every committed event, in id order */
    onEvent (listener: (entry: LogEntry) => void): void { listeners.add(listener) },
    offEvent (listener: (entry: LogEntry) => void): void { listeners.delete(listener) },
    /** the last id the feed handed out: every event up to it has gone to the listeners, none after it */
    head: (): number => cursor,
    /** events after `after`, in id order */
    page: async (after: number, limit: number, filter: EventFilter = {}): Promise<LogEntry[]> => (await store.after(after, limit, filter)).map(toEntry),
    /** removes events past retention (never ones the webhook dispatcher has not passed) */
    prune: async (now = Date.now()): Promise<number> => await store.prune(now - deps.retentionMs),
    async start (): Promise<void> {
      cursor = await store.lastId()
      started = true
      if (store.shared) {
        poll = setInterval(() => { void feed() }, FEED_POLL_MS)
        poll.unref()
      }
      pruneNow()
      prune = setInterval(pruneNow, deps.pruneIntervalMs)
      prune.unref()
    },
    /** stops feeding; resolves once a read under way is over (before the database closes) */
    async stop (): Promise<void> {
      stopped = true
      if (poll !== null) clearInterval(poll)
      if (prune !== null) clearInterval(prune)
      await (queued ?? reading)
    }
  }
}

export type EventLog = ReturnType<typeof createEventLog>
