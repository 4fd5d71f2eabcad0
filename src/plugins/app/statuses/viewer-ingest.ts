import { listViewers, viewerWriter, type ViewToRecord } from '../../../db/repositories/viewers.js'
import type { ReceiptEvent } from '../../../platform/types.js'
import { toViewer } from './api-shapes.js'
import type { StatusDeps } from './service.js'

/** Receipts are written at most this long after they arrive ... */
export const INGEST_WINDOW_MS = 20
/** ... or as soon as this many are queued. */
export const INGEST_BATCH_MAX = 500
/** At most one status-viewers-update per status per this window (the last state always goes out). */
export const VIEWERS_UPDATE_MS = 200

interface Cooling { timer: NodeJS.Timeout | null, dirty: boolean }

/**
 * Turns status receipts into viewer rows: batched (INGEST_WINDOW_MS / INGEST_BATCH_MAX) into one
 * transaction, then a throttled status-viewers-update per status that changed.
 */
export function createViewerIngest (deps: Pick<StatusDeps, 'db' | 'events' | 'log' | 'metrics'>) {
  const { db: handle, events, log, metrics } = deps
  const db = handle.db
  const writer = viewerWriter(handle.sqlite)
  let closed = false
  let queue: ViewToRecord[] = []
  /** when each queued view arrived, in queue order (for the receipt-to-commit latency) */
  let arrivals: number[] = []
  let flushTimer: NodeJS.Timeout | null = null
  /** per status: the cool-down after an update, and whether another change came in during it */
  const cooling = new Map<number, Cooling>()
  const stats = { received: 0, recorded: 0, flushes: 0 }

  function ingest (sessionId: string, receipts: ReceiptEvent[]): void {
    const now = Date.now()
    for (const r of receipts) {
      if (r.type !== 'read' && r.type !== 'played') continue
      if (r.viewerNumber === null) {
        log.debug({ sessionId, viewerJid: r.viewerJid, messageId: r.messageId }, 'view from an unmapped LID skipped')
        continue
      }
      queue.push({ sessionId, messageId: r.messageId, number: r.viewerNumber, jid: `${r.viewerNumber}@s.whatsapp.net`, viewedAt: r.at, isReal: !r.isOwn })
      arrivals.push(now)
      stats.received++
    }
    if (queue.length >= INGEST_BATCH_MAX) flush()
    else if (queue.length > 0) scheduleFlush(INGEST_WINDOW_MS)
  }

  function scheduleFlush (ms: number): void {
    flushTimer ??= setTimeout(flush, ms)
  }

  /** Writes every queued view in one transaction; returns false when they had to stay queued. */
  function flush (): boolean {
    if (flushTimer !== null) { clearTimeout(flushTimer); flushTimer = null }
    if (queue.length === 0) return true
    // better-sqlite3 would nest our transaction as a savepoint inside one another caller holds open across
    // an await, and lose the views if that one rolls back: wait for it to finish instead.
    if (handle.sqlite.inTransaction) { if (!closed) scheduleFlush(INGEST_WINDOW_MS); return false }
    const batch = queue
    const arrived = arrivals
    queue = []
    arrivals = []
    let result
    try {
      result = writer.record(batch)
    } catch (err) {
      queue = batch.concat(queue)
      arrivals = arrived.concat(arrivals)
      log.error({ err, queued: queue.length }, 'recording status views failed; will retry')
      if (!closed) scheduleFlush(1000)
      return false
    }
    stats.flushes++
    stats.recorded += batch.length
    if (metrics !== undefined) {
      const committedAt = Date.now()
      for (const at of arrived) metrics.receiptCommitLatency.observe((committedAt - at) / 1000)
    }
    if (result.unmatched > 0) log.debug({ unmatched: result.unmatched }, 'views for unknown statuses skipped')
    for (const [statusId, sessionId] of result.changed) viewersChanged(statusId, sessionId)
    return true
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
    void emitThenCool(statusId, sessionId, entry)
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
    try {
      const rows = await listViewers(db, statusId)
      // an empty list means the status was deleted meanwhile (its viewers went with it)
      if (rows.length === 0 || closed) return
      events.emit('status-viewers-update', { sessionId, statusId: String(statusId), viewers: rows.map(toViewer) })
    } catch (err) {
      log.warn({ err, statusId }, 'could not read viewers for status-viewers-update')
    }
  }

  /** The platform's status-receipts events come here; after close they are dropped with a warning. */
  function onReceipts ({ sessionId, receipts }: { sessionId: string, receipts: ReceiptEvent[] }): void {
    if (closed) { log.warn({ sessionId, count: receipts.length }, 'receipts after close dropped'); return }
    ingest(sessionId, receipts)
  }

  /** Writes what is queued and stops timers; receipts arriving later are dropped. */
  function stop (): void {
    const left = queue.length
    if (!flush() && left > 0) log.error({ lost: queue.length }, 'status views could not be written before close')
    closed = true
    if (flushTimer !== null) { clearTimeout(flushTimer); flushTimer = null }
    for (const { timer } of cooling.values()) if (timer !== null) clearTimeout(timer)
    cooling.clear()
  }

  return {
    ingest,
    onReceipts,
    flush,
    stats: (): Readonly<typeof stats> & { queued: number } => ({ ...stats, queued: queue.length }),
    stop
  }
}
