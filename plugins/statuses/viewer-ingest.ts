import fp from 'fastify-plugin'
import type { StatusChange, ViewToRecord, viewerWriter } from '../../src/db/repositories/viewers.js'
import { viewerWriterFor, type pgViewerWriter } from '../../src/db/repositories/viewers-pg.js'
import { pgAppendEvents, sqliteEventLog, type NewEvent } from '../../src/db/repositories/events.js'
import type { EventPayloads } from '../../schemas/events.js'
import { toLogRow, type EventLog } from '../events/log.js'
import type { ReceiptSink, StatusDelivery, StatusView } from '../../src/platform/types.js'
import { iso, toViewer } from './api-shapes.js'
import type { StatusDeps } from './service.js'

/** At most one status-viewers-update per status per this window (the last state always goes out). */
export const VIEWERS_UPDATE_MS = 200
/** How long a commit waits for a transaction another caller holds open before the receipt is refused. */
export const BUSY_WAIT_MAX_MS = 5000
const BUSY_RETRY_MS = 5
/** statuses whose real-viewer count is kept in memory for status-viewers-added (the most recent ones) */
const COUNTS_KEPT = 1000

interface Cooling { timer: NodeJS.Timeout | null, dirty: boolean }

/**
 * The receipt sink: the platform hands over the views of the receipt stanzas of one event-loop turn
 * before Baileys acks them, and they are committed here in one transaction, synchronously. Views by a LID
 * without a known number are stored under the LID and get the number when the platform learns it.
 *
 * In the same transaction (so one per turn, never delayed), every status with new viewers gets a
 * `status-viewers-added` with only those, in the event log (docs/events-log.md); every change also goes
 * out as the throttled `status-viewers-update` carrying the full list (logged when it is read).
 */
export function createViewerIngest (deps: Pick<StatusDeps, 'db' | 'events' | 'log' | 'metrics'> & { eventLog: Pick<EventLog, 'committed'> }) {
  const { db: handle, events, log, metrics, eventLog } = deps
  const sqlite = handle.dialect === 'sqlite' ? handle.sqlite : null
  const writer = viewerWriterFor(handle)
  const sqliteWriter = handle.dialect === 'sqlite' ? writer as ReturnType<typeof viewerWriter> : null
  const sqliteLog = handle.dialect === 'sqlite' ? sqliteEventLog(handle.sqlite) : null
  let closed = false
  /** per status: the cool-down after an update, and whether another change came in during it */
  const cooling = new Map<number, Cooling>()
  const stats = { received: 0, recorded: 0, commits: 0, held: 0, mapped: 0 }
  /**
   * per status: its real viewers (`viewerCount`), counted once from the table and then kept up to date
   * by the inserts, so a busy status is not counted again for every commit. Keyed by id and checked
   * against the message id (an id may be reused after its status was deleted); a LID merge drops it.
   */
  const counts = new Map<number, { messageId: string, n: number }>()

  const toRecord = (sessionId: string, v: StatusView): ViewToRecord => ({
    sessionId,
    messageId: v.messageId,
    number: v.viewerNumber,
    jid: v.viewerNumber === null ? v.viewerJid : `${v.viewerNumber}@s.whatsapp.net`,
    viewedAt: v.at,
    isReal: !v.isOwn
  })

  /** status-viewers-added of each status with new viewers, counted inside the commit (`count`: the table's answer) */
  function addedEvents (changes: Map<number, StatusChange>, count: (statusId: number) => number): NewEvent[] {
    const rows: NewEvent[] = []
    const at = Date.now()
    for (const [statusId, change] of changes) {
      if (change.added.length === 0) continue
      const cached = counts.get(statusId)
      counts.delete(statusId) // re-inserted last: the most recently used stay
      let n: number
      if (cached !== undefined && cached.messageId === change.messageId) {
        n = cached.n
        for (const v of change.added) if (v.isReal) n++
      } else {
        n = count(statusId)
      }
      counts.set(statusId, { messageId: change.messageId, n })
      if (counts.size > COUNTS_KEPT) counts.delete(counts.keys().next().value as number)
      rows.push(toLogRow('status-viewers-added', addedPayload(statusId, change, n), at))
    }
    return rows
  }

  function addedPayload (statusId: number, change: StatusChange, n: number): EventPayloads['status-viewers-added'] {
    const viewers = change.added
      .map((v) => ({ jid: v.jid, number: v.number, viewedAt: iso(v.viewedAt), isReal: v.isReal, at: v.viewedAt, key: v.number ?? v.jid }))
      .sort((a, b) => a.at - b.at || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map(({ jid, number, viewedAt, isReal }) => ({ jid, number, viewedAt, isReal }))
    return { sessionId: change.sessionId, statusId: String(statusId), viewers, viewerCount: n }
  }

  /**
   * The views and their status-viewers-added events in one transaction: one commit per event-loop turn,
   * one event row per status with new viewers (not per viewer). The events reach clients from the log.
   */
  function write (sessionId: string, views: StatusView[], arrivedAt: number): void | Promise<void> {
    const records = views.map((v) => toRecord(sessionId, v))
    try {
      if (sqliteWriter !== null && sqliteLog !== null) {
        const changes = sqliteWriter.record(records, (c) => { sqliteLog.append(addedEvents(c, sqliteWriter.realViewerCount)) })
        written(views, arrivedAt, changes)
        return
      }
      const pgWriter = writer as ReturnType<typeof pgViewerWriter>
      return pgWriter.record(records, async (c, client) => {
        const need = [...c].filter(([id, ch]) => ch.added.length > 0 && counts.get(id)?.messageId !== ch.messageId).map(([id]) => id)
        const counted = new Map<number, number>()
        if (need.length > 0) {
          const r = await client.query<{ status_id: number, n: number }>(
            'select status_id, count(*)::int as n from viewers where status_id = any($1::bigint[]) and is_real = 1 group by status_id', [need])
          for (const row of r.rows) counted.set(Number(row.status_id), row.n)
        }
        await pgAppendEvents(client, addedEvents(c, (id) => counted.get(id) ?? 0))
      }).then((c) => { written(views, arrivedAt, c) }, (err: unknown) => { counts.clear(); throw err })
    } catch (err) {
      // rolled back: the counts kept may have counted viewers that are not stored
      counts.clear()
      throw err
    }
  }

  function written (views: StatusView[], arrivedAt: number, changes: Map<number, StatusChange>): void {
    stats.commits++
    stats.recorded += views.length
    if (metrics !== undefined) {
      const seconds = (Date.now() - arrivedAt) / 1000
      for (let i = 0; i < views.length; i++) metrics.receiptCommitLatency.observe(seconds)
    }
    if (changes.size === 0) return
    // status-viewers-added is committed: the log's feed hands it out (SQLite: now)
    eventLog.committed()
    for (const [statusId, change] of changes) viewersChanged(statusId, change.sessionId)
  }

  /**
   * Synchronous on SQLite: when it returns, the views are committed (WAL, synchronous=NORMAL: a killed
   * process keeps them). It throws when they are not, and then the platform leaves the stanza
   * unacknowledged. On PostgreSQL it returns the commit's promise, which the platform awaits before the ack.
   */
  function commit (sessionId: string, views: StatusView[]): void | Promise<void> {
    if (closed) throw new Error('viewer ingest is closed')
    stats.received += views.length
    // better-sqlite3 would nest our transaction as a savepoint inside one another caller holds open across
    // an await, and lose the views if that one rolls back: hold the ack until it is over instead.
    if (sqlite?.inTransaction === true) return commitWhenIdle(sessionId, views)
    return write(sessionId, views, Date.now())
  }

  async function commitWhenIdle (sessionId: string, views: StatusView[]): Promise<void> {
    const arrivedAt = Date.now()
    stats.held++
    const deadline = Date.now() + BUSY_WAIT_MAX_MS
    while (sqlite?.inTransaction === true) {
      if (closed || Date.now() > deadline) throw new Error('the database stayed in another transaction')
      await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS))
    }
    if (closed) throw new Error('viewer ingest is closed')
    await write(sessionId, views, arrivedAt)
  }

  /**
   * Delivery receipts (the per-status report's deliveredAt), under commit's contract: synchronous on SQLite,
   * the commit's promise on PostgreSQL; the own account's devices are not recorded.
   */
  function commitDeliveries (sessionId: string, deliveries: StatusDelivery[]): void | Promise<void> {
    if (closed) throw new Error('viewer ingest is closed')
    const rows = deliveries.filter((d) => !d.isOwn).map((d) => ({
      sessionId, messageId: d.messageId, number: d.viewerNumber, jid: d.viewerNumber === null ? d.viewerJid : `${d.viewerNumber}@s.whatsapp.net`, deliveredAt: d.at
    }))
    if (rows.length === 0) return
    if (sqlite?.inTransaction !== true) return writer.recordDeliveries(rows)
    return (async () => {
      const deadline = Date.now() + BUSY_WAIT_MAX_MS
      while (sqlite?.inTransaction === true) {
        if (closed || Date.now() > deadline) throw new Error('the database stayed in another transaction')
        await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS))
      }
      await writer.recordDeliveries(rows)
    })()
  }

  function lidsMapped (sessionId: string, mappings: Array<{ lid: string, number: string }>): void | Promise<void> {
    if (closed) return
    const changed = writer.mapLids(sessionId, mappings)
    if (changed instanceof Promise) return changed.then((c) => { mapped(sessionId, mappings, c) })
    mapped(sessionId, mappings, changed)
  }

  function mapped (sessionId: string, mappings: Array<{ lid: string, number: string }>, changed: Set<number>): void {
    stats.mapped += changed.size
    if (changed.size > 0) log.info({ sessionId, lids: mappings.length, statuses: changed.size }, 'viewers stored under a LID got their number')
    for (const statusId of changed) {
      counts.delete(statusId) // a merge may have made two entries one
      viewersChanged(statusId, sessionId)
    }
  }

  function unmappedLids (sessionId: string, limit: number): string[] | Promise<string[]> {
    return closed ? [] : writer.unmappedLids(sessionId, limit)
  }

  /**
   * Leading edge at once, then at most one more per window carrying the state at its end. The window
   * starts when an update has gone out, so slow reads (big lists) cannot bunch two updates together.
   */
  function viewersChanged (statusId: number, sessionId: string): void {
    if (closed) return
    const state = cooling.get(statusId)
    if (state !== undefined) { state.dirty = true; return }
    const entry: Cooling = { timer: null, dirty: false }
    cooling.set(statusId, entry)
    // after the commit's acks and status-viewers-added have gone: reading a long list takes a while
    setImmediate(() => { void emitThenCool(statusId, sessionId, entry) })
  }

  async function emitThenCool (statusId: number, sessionId: string, entry: Cooling): Promise<void> {
    await emitViewers(statusId, sessionId)
    if (closed) return
    entry.timer = setTimeout(() => {
      entry.timer = null
      if (!entry.dirty || closed) { cooling.delete(statusId); return }
      entry.dirty = false
      void emitThenCool(statusId, sessionId, entry)
    }, VIEWERS_UPDATE_MS)
  }

  async function emitViewers (statusId: number, sessionId: string): Promise<void> {
    if (closed) return
    try {
      const rows = await writer.list(statusId)
      // an empty list means the status was deleted meanwhile (its viewers went with it)
      if (rows.length === 0 || closed) return
      events.emit('status-viewers-update', { sessionId, statusId: String(statusId), viewers: rows.map(toViewer) })
    } catch (err) {
      log.warn({ err, statusId }, 'could not read viewers for status-viewers-update')
    }
  }

  /** Stops timers; later receipts are refused (so never acknowledged) and delivered again after a restart. */
  function stop (): void {
    closed = true
    for (const { timer } of cooling.values()) if (timer !== null) clearTimeout(timer)
    cooling.clear()
    counts.clear()
  }

  const sink: ReceiptSink = { commit, commitDeliveries, lidsMapped, unmappedLids }
  return {
    ...sink,
    sink,
    stats: (): Readonly<typeof stats> => ({ ...stats }),
    stop
  }
}

export type ViewerIngest = ReturnType<typeof createViewerIngest>

declare module 'fastify' {
  interface FastifyInstance {
    /** the receipt sink the platform commits status views through, and its counters */
    viewerIngest: ViewerIngest
  }
}

// Registered before the platform, which is created with its sink.
export default fp(async (app) => {
  const ingest = createViewerIngest({
    db: app.db,
    events: app.domainEvents,
    eventLog: app.eventLog,
    log: app.log.child({ plugin: 'viewer-ingest' }),
    // optional: a harness may build the service without the metrics plugin
    ...(app.hasDecorator('metrics') ? { metrics: app.metrics } : {})
  })
  app.decorate('viewerIngest', ingest)
  // onClose runs before the database plugin's (reverse order), after the platform ended its sockets (preClose)
  app.addHook('onClose', async () => { ingest.stop() })
}, { name: 'viewer-ingest', dependencies: ['db', 'domain-events'] })
