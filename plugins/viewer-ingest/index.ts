import fp from 'fastify-plugin'
import type { DeliveryToRecord, InCommit, StatusChange, ViewToRecord } from '../../src/db/stores/viewers.js'
import type { NewEvent } from '../../src/db/stores/events.js'
import type { EventPayloads } from '../../schemas/events.js'
import { toLogRow } from '../events/log.js'
import { contactJid } from '../../src/jid.js'
import type { ReceiptSink, StatusDelivery, StatusView } from '../../src/platform/types.js'
import type { ViewerRecord } from '../../src/db/stores/viewers.js'
import { iso } from '../../src/api-shapes.js'
import type { ViewerIngestDeps } from './deps.js'
import { createViewersUpdates, VIEWERS_UPDATE_MS, type Changed } from './viewers-update.js'

export { VIEWERS_UPDATE_MS }
/** statuses whose real-viewer count is kept in memory for status-viewers-added (the most recent ones) */
const COUNTS_KEPT = 1000
/** after a restart, statuses viewed in the log's last this long get a status-viewers-update (a window's last one may have been cut off) */
export const RECOVER_SPAN_MS = 30_000
/** the statuses of one session, as the throttle's claims take them */
const ofSession = (sessionId: string, statusIds: Set<number>): Changed => new Map([...statusIds].map((id) => [id, { sessionId }]))

/**
 * The receipt sink: the platform hands over the views and delivery receipts of the receipt stanzas of one
 * event-loop turn before Baileys acks them, and they are committed here in one transaction (the viewer store's
 * commitReceipts); the platform acks once that resolved. Views by a LID without a known number are stored
 * under the LID and get the number when the platform learns it.
 *
 * In the same transaction (so one per turn, never delayed), every status with new viewers gets a
 * `status-viewers-added` with only those, in the event log (docs/events-log.md), and every changed status
 * whose throttle window is open gets its `status-viewers-update` with the full list (viewers-update.ts).
 */
export function createViewerIngest (deps: ViewerIngestDeps) {
  const { stores: { viewers }, log, metrics, eventLog } = deps
  let closed = false
  const updates = createViewersUpdates(trailing, log)
  const stats = { received: 0, recorded: 0, commits: 0, mapped: 0 }
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
    jid: contactJid(v.viewerNumber, v.viewerJid),
    viewedAt: v.at,
    isReal: !v.isOwn
  })

  /** the statuses with new viewers whose count is not kept (read in the commit) */
  const uncounted = (changes: Map<number, StatusChange>): number[] =>
    [...changes].filter(([id, ch]) => ch.added.length > 0 && counts.get(id)?.messageId !== ch.messageId).map(([id]) => id)

  /** status-viewers-added of each status with new viewers, counted inside the commit (`counted`: the table's answer) */
  function addedEvents (changes: Map<number, StatusChange>, counted: Map<number, number>): NewEvent[] {
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
        n = counted.get(statusId) ?? 0
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

  /** status-viewers-update of the claimed statuses, from their lists read in the commit */
  const claimedEvents = (claimed: Changed, lists: Map<number, ViewerRecord[]>): NewEvent[] =>
    [...claimed].flatMap(([statusId, { sessionId }]) => updates.eventsOf(statusId, sessionId, lists.get(statusId) ?? []))

  /**
   * THE receipt commit, the one entry point (the sink's `commit`): a turn's views, its delivery receipts
   * (the per-status report's deliveredAt; the own account's devices are not recorded) and their events in
   * one transaction (the viewer store's commitReceipts), with the other sessions' of the same turn
   * (openGroup). One status-viewers-added per status with new viewers (not per viewer) and one
   * status-viewers-update per changed status whose window is open (at most one per status per window); the
   * events reach clients from the log. Resolved means committed, and only
   * then the platform acks the stanzas.
   */
  async function commit (sessionId: string, seen: StatusView[], delivered: StatusDelivery[] = []): Promise<void> {
    if (closed) throw new Error('viewer ingest is closed')
    stats.received += seen.length
    const views = seen.map((v) => toRecord(sessionId, v))
    const deliveries = delivered.filter((d) => !d.isOwn).map((d) => ({
      sessionId, messageId: d.messageId, number: d.viewerNumber, jid: contactJid(d.viewerNumber, d.viewerJid), deliveredAt: d.at
    }))
    if (views.length + deliveries.length === 0) return
    const g = group ?? openGroup()
    for (const v of views) g.views.push(v)
    for (const d of deliveries) g.deliveries.push(d)
    await g.committed
  }

  /**
   * The commits asked for in one synchronous run, as one transaction: the platform hands every session's
   * receipt turn over at one setImmediate (src/platform/receipt-turns.ts), so a storm spread over many sessions
   * is a commit per turn, not one per session. All of them are committed, or none (each caller's frames
   * then stay unacknowledged).
   */
  interface Group { views: ViewToRecord[], deliveries: DeliveryToRecord[], committed: Promise<void> }
  let group: Group | null = null
  function openGroup (): Group {
    const views: ViewToRecord[] = []
    const deliveries: DeliveryToRecord[] = []
    const arrivedAt = Date.now()
    // a microtask: after the calls of this synchronous run have joined
    const committed = Promise.resolve().then(async () => {
      group = null
      await commitAll(views, deliveries, arrivedAt)
    })
    return (group = { views, deliveries, committed })
  }

  async function commitAll (views: ViewToRecord[], deliveries: DeliveryToRecord[], arrivedAt: number): Promise<void> {
    let claimed: Changed = new Map()
    const inCommit: InCommit<Map<number, StatusChange>> = {
      needs: (c) => {
        claimed = updates.claim(c)
        return { counts: uncounted(c), lists: [...claimed.keys()] }
      },
      events: (c, read) => [...addedEvents(c, read.counts), ...claimedEvents(claimed, read.lists)]
    }
    let changes: Map<number, StatusChange>
    try {
      changes = await viewers.commitReceipts({ views, deliveries }, inCommit)
    } catch (err) {
      // rolled back: the counts kept may have counted viewers that are not stored
      counts.clear()
      updates.afterCommit(claimed)
      throw err
    }
    stats.commits++
    stats.recorded += views.length
    if (metrics !== undefined) {
      const seconds = (Date.now() - arrivedAt) / 1000
      for (let i = 0; i < views.length; i++) metrics.receiptCommitLatency.observe(seconds)
    }
    if (changes.size === 0) return
    // the events are committed: the log's feed hands them out
    eventLog.committed()
    updates.afterCommit(claimed, changes)
  }

  /** LID merges: the rows and the status-viewers-update of the changed statuses whose window is open, in one transaction */
  async function lidsMapped (sessionId: string, mappings: Array<{ lid: string, number: string }>): Promise<void> {
    if (closed) return
    let claimed: Changed = new Map()
    let changed: Set<number>
    try {
      changed = await viewers.mapLids(sessionId, mappings, {
        needs: (c) => {
          claimed = updates.claim(ofSession(sessionId, c))
          return { lists: [...claimed.keys()] }
        },
        events: (_c, read) => claimedEvents(claimed, read.lists)
      })
    } catch (err) {
      updates.afterCommit(claimed)
      throw err
    }
    stats.mapped += changed.size
    if (changed.size === 0) return
    log.info({ sessionId, lids: mappings.length, statuses: changed.size }, 'viewers stored under a LID got their number')
    for (const statusId of changed) counts.delete(statusId) // a merge may have made two entries one
    if (claimed.size > 0) eventLog.committed()
    updates.afterCommit(claimed, ofSession(sessionId, changed))
  }

  async function unmappedLids (sessionId: string, limit: number): Promise<string[]> {
    return closed ? [] : await viewers.unmappedLids(sessionId, limit)
  }

  /** The update at a window's end: the list read and the event appended in one transaction of its own. */
  async function trailing (statusId: number, sessionId: string): Promise<void> {
    await viewers.commitListEvents([statusId], (lists) => updates.eventsOf(statusId, sessionId, lists.get(statusId) ?? []))
    eventLog.committed()
  }

  /**
   * At start: a status-viewers-update for each status viewed in the log's last RECOVER_SPAN_MS. A window's
   * last update is written after its changes, in a transaction of its own; the service may have stopped in
   * between (a crash, or a stop with windows open), and then this one carries the state it would have.
   */
  async function recover (): Promise<number> {
    const recent = await viewers.recentlyViewed(RECOVER_SPAN_MS)
    for (const { statusId, sessionId } of recent) await trailing(statusId, sessionId)
    return recent.length
  }

  /** Stops timers; later receipts are refused (so never acknowledged) and delivered again after a restart. */
  function stop (): void {
    closed = true
    updates.stop()
    counts.clear()
  }

  const sink: ReceiptSink = {
    commit,
    takesDeliveries: true,
    lidsMapped: async (sessionId, mappings) => { await lidsMapped(sessionId, mappings) },
    unmappedLids: async (sessionId, limit) => await unmappedLids(sessionId, limit)
  }
  return { commit, lidsMapped, unmappedLids, sink, stats: (): Readonly<typeof stats> => ({ ...stats }), recover, stop }
}

export type ViewerIngest = ReturnType<typeof createViewerIngest>

declare module 'fastify' {
  interface FastifyInstance {
    /** the receipt sink the platform commits status views through, and its counters */
    viewerIngest: ViewerIngest
  }
}

// The platform depends on this plugin: it is created with its sink.
export default fp(async (app) => {
  const ingest = createViewerIngest({
    stores: app.stores,
    eventLog: app.eventLog,
    log: app.log.child({ plugin: 'viewer-ingest' }),
    metrics: app.metrics
  })
  app.decorate('viewerIngest', ingest)
  // before the platform's onReady starts the sessions (the platform depends on this plugin: its hooks run later)
  app.addHook('onReady', async () => {
    const n = await ingest.recover().catch((err: unknown) => { app.log.error({ err }, 'status-viewers-update after the restart failed'); return 0 })
    if (n > 0) app.log.info({ statuses: n }, 'status-viewers-update written for the statuses viewed just before the restart')
  })
  // before the database closes (this plugin depends on it), after the platform ended its sockets (preClose)
  app.addHook('onClose', async () => { ingest.stop() })
}, { name: 'viewer-ingest', dependencies: ['db', 'domain-events', 'metrics'] })
