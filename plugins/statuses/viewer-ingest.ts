import fp from 'fastify-plugin'
import type { StatusChange, ViewToRecord, viewerWriter } from '../../src/db/repositories/viewers.js'
import { viewerWriterFor, type pgViewerWriter } from '../../src/db/repositories/viewers-pg.js'
import { pgAppendEvents, recentlyViewed, sqliteEventLog, type NewEvent } from '../../src/db/repositories/events.js'
import { inTransaction } from '../../src/db/repositories/pg-tx.js'
import type { EventPayloads } from '../../schemas/events.js'
import { toLogRow } from '../events/log.js'
import type { ReceiptSink, StatusDelivery, StatusView } from '../../src/platform/types.js'
import type { ViewerRow } from '../../src/db/database.js'
import { iso } from './api-shapes.js'
import type { StatusDeps } from './service.js'
import { createViewersUpdates, updateEvents, VIEWERS_UPDATE_MS, type Changed } from './viewers-update.js'

export { VIEWERS_UPDATE_MS }
type PgClient = Parameters<ReturnType<typeof pgViewerWriter>['lists']>[0]
/** How long a commit waits for a transaction another caller holds open before the receipt is refused. */
export const BUSY_WAIT_MAX_MS = 5000
const BUSY_RETRY_MS = 5
/** statuses whose real-viewer count is kept in memory for status-viewers-added (the most recent ones) */
const COUNTS_KEPT = 1000
/** after a restart, statuses viewed in the log's last this long get a status-viewers-update (a window's last one may have been cut off) */
export const RECOVER_SPAN_MS = 30_000
/** the statuses of one session, as the throttle's claims take them */
const ofSession = (sessionId: string, statusIds: Set<number>): Changed => new Map([...statusIds].map((id) => [id, { sessionId }]))

/**
 * The receipt sink: the platform hands over the views of the receipt stanzas of one event-loop turn
 * before Baileys acks them, and they are committed here in one transaction, synchronously. Views by a LID
 * without a known number are stored under the LID and get the number when the platform learns it.
 *
 * In the same transaction (so one per turn, never delayed), every status with new viewers gets a
 * `status-viewers-added` with only those, in the event log (docs/events-log.md), and every changed status
 * whose throttle window is open gets its `status-viewers-update` with the full list (viewers-update.ts).
 */
export function createViewerIngest (deps: Pick<StatusDeps, 'db' | 'log' | 'metrics' | 'eventLog'>) {
  const { db: handle, log, metrics, eventLog } = deps
  const sqlite = handle.dialect === 'sqlite' ? handle.sqlite : null
  const writer = viewerWriterFor(handle)
  const sqliteWriter = handle.dialect === 'sqlite' ? writer as ReturnType<typeof viewerWriter> : null
  const pgWriter = (): ReturnType<typeof pgViewerWriter> => writer as ReturnType<typeof pgViewerWriter>
  const sqliteLog = handle.dialect === 'sqlite' ? sqliteEventLog(handle.sqlite) : null
  let closed = false
  const updates = createViewersUpdates(trailing, log)
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

  /** status-viewers-update of the claimed statuses, their lists read in the commit (`lists`) */
  const claimedEvents = (claimed: Changed, lists: (statusId: number) => ViewerRow[]): NewEvent[] =>
    [...claimed].flatMap(([statusId, { sessionId }]) => updateEvents(statusId, sessionId, lists(statusId)))
  /** PostgreSQL: claimedEvents with the lists read in one query on the transaction's client */
  async function pgClaimedEvents (client: PgClient, claimed: Changed): Promise<NewEvent[]> {
    const lists = await pgWriter().lists(client, [...claimed.keys()])
    return claimedEvents(claimed, (id) => lists.get(id) ?? [])
  }

  /**
   * The views and their events in one transaction: one commit per event-loop turn, one status-viewers-added
   * per status with new viewers (not per viewer) and one status-viewers-update per changed status whose
   * window is open (at most one per status per window). The events reach clients from the log.
   */
  function write (sessionId: string, views: StatusView[], arrivedAt: number): void | Promise<void> {
    const records = views.map((v) => toRecord(sessionId, v))
    let claimed: Changed = new Map()
    const failed = (err: unknown): never => {
      // rolled back: the counts kept may have counted viewers that are not stored
      counts.clear()
      updates.settle(claimed)
      throw err
    }
    try {
      if (sqliteWriter !== null && sqliteLog !== null) {
        const changes = sqliteWriter.record(records, (c) => {
          claimed = updates.claim(c)
          sqliteLog.append([...addedEvents(c, sqliteWriter.realViewerCount), ...claimedEvents(claimed, sqliteWriter.list)])
        })
        written(views, arrivedAt, changes, claimed)
        return
      }
      return pgWriter().record(records, async (c, client) => {
        const need = [...c].filter(([id, ch]) => ch.added.length > 0 && counts.get(id)?.messageId !== ch.messageId).map(([id]) => id)
        const counted = new Map<number, number>()
        if (need.length > 0) {
          const r = await client.query<{ status_id: number, n: number }>(
            'select status_id, count(*)::int as n from viewers where status_id = any($1::bigint[]) and is_real = 1 group by status_id', [need])
          for (const row of r.rows) counted.set(Number(row.status_id), row.n)
        }
        claimed = updates.claim(c)
        await pgAppendEvents(client, [...addedEvents(c, (id) => counted.get(id) ?? 0), ...await pgClaimedEvents(client, claimed)])
      }).then((c) => { written(views, arrivedAt, c, claimed) }, failed)
    } catch (err) {
      return failed(err)
    }
  }

  function written (views: StatusView[], arrivedAt: number, changes: Map<number, StatusChange>, claimed: Changed): void {
    stats.commits++
    stats.recorded += views.length
    if (metrics !== undefined) {
      const seconds = (Date.now() - arrivedAt) / 1000
      for (let i = 0; i < views.length; i++) metrics.receiptCommitLatency.observe(seconds)
    }
    if (changes.size === 0) return
    // the events are committed: the log's feed hands them out (SQLite: now)
    eventLog.committed()
    updates.settle(claimed, changes)
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

  /** SQLite: waits until no other caller holds a transaction open; throws when that lasts over BUSY_WAIT_MAX_MS or the ingest closes. */
  async function idle (): Promise<void> {
    const deadline = Date.now() + BUSY_WAIT_MAX_MS
    while (sqlite?.inTransaction === true) {
      if (closed || Date.now() > deadline) throw new Error('the database stayed in another transaction')
      await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS))
    }
    if (closed) throw new Error('viewer ingest is closed')
  }

  async function commitWhenIdle (sessionId: string, views: StatusView[]): Promise<void> {
    const arrivedAt = Date.now()
    stats.held++
    await idle()
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
    return idle().then(async () => { await writer.recordDeliveries(rows) })
  }

  /** LID merges: the rows and the status-viewers-update of the changed statuses whose window is open, in one transaction */
  function lidsMapped (sessionId: string, mappings: Array<{ lid: string, number: string }>): void | Promise<void> {
    if (closed) return
    let claimed: Changed = new Map()
    const failed = (err: unknown): never => { updates.settle(claimed); throw err }
    try {
      if (sqliteWriter !== null && sqliteLog !== null) {
        const changed = sqliteWriter.mapLids(sessionId, mappings, (c) => {
          claimed = updates.claim(ofSession(sessionId, c))
          sqliteLog.append(claimedEvents(claimed, sqliteWriter.list))
        })
        mapped(sessionId, mappings, changed, claimed)
        return
      }
      return pgWriter().mapLids(sessionId, mappings, async (c, client) => {
        claimed = updates.claim(ofSession(sessionId, c))
        await pgAppendEvents(client, await pgClaimedEvents(client, claimed))
      }).then((c) => { mapped(sessionId, mappings, c, claimed) }, failed)
    } catch (err) {
      return failed(err)
    }
  }

  function mapped (sessionId: string, mappings: Array<{ lid: string, number: string }>, changed: Set<number>, claimed: Changed): void {
    stats.mapped += changed.size
    if (changed.size === 0) return
    log.info({ sessionId, lids: mappings.length, statuses: changed.size }, 'viewers stored under a LID got their number')
    for (const statusId of changed) counts.delete(statusId) // a merge may have made two entries one
    if (claimed.size > 0) eventLog.committed()
    updates.settle(claimed, ofSession(sessionId, changed))
  }

  function unmappedLids (sessionId: string, limit: number): string[] | Promise<string[]> {
    return closed ? [] : writer.unmappedLids(sessionId, limit)
  }

  /**
   * The update at a window's end: the list read and the event appended in one transaction of its own
   * (SQLite: synchronously, once no other caller holds a transaction open).
   */
  async function trailing (statusId: number, sessionId: string): Promise<void> {
    if (sqliteWriter !== null && sqlite !== null && sqliteLog !== null) {
      await idle()
      sqlite.transaction(() => { sqliteLog.append(updateEvents(statusId, sessionId, sqliteWriter.list(statusId))) })()
    } else if (handle.dialect === 'postgres') {
      await inTransaction(handle.pool, async (client) => { await pgAppendEvents(client, await pgClaimedEvents(client, ofSession(sessionId, new Set([statusId])))) })
    }
    eventLog.committed()
  }

  /**
   * At start: a status-viewers-update for each status viewed in the log's last RECOVER_SPAN_MS. A window's
   * last update is written after its changes, in a transaction of its own; the service may have stopped in
   * between (a crash, or a stop with windows open), and then this one carries the state it would have.
   */
  async function recover (): Promise<number> {
    const recent = await recentlyViewed(handle.db, handle.dialect, RECOVER_SPAN_MS)
    for (const { statusId, sessionId } of recent) await trailing(statusId, sessionId)
    return recent.length
  }

  /** Stops timers; later receipts are refused (so never acknowledged) and delivered again after a restart. */
  function stop (): void {
    closed = true
    updates.stop()
    counts.clear()
  }

  const sink: ReceiptSink = { // Promise-only for the platform (issue 34), until the viewer store is a port
    commit: async (sessionId, views) => { await commit(sessionId, views) },
    commitDeliveries: async (sessionId, deliveries) => { await commitDeliveries(sessionId, deliveries) },
    lidsMapped: async (sessionId, mappings) => { await lidsMapped(sessionId, mappings) },
    unmappedLids: async (sessionId, limit) => await unmappedLids(sessionId, limit)
  }
  return { commit, commitDeliveries, lidsMapped, unmappedLids, sink, stats: (): Readonly<typeof stats> => ({ ...stats }), recover, stop }
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
    eventLog: app.eventLog,
    log: app.log.child({ plugin: 'viewer-ingest' }),
    // optional: a harness may build the service without the metrics plugin
    ...(app.hasDecorator('metrics') ? { metrics: app.metrics } : {})
  })
  app.decorate('viewerIngest', ingest)
  // before the platform's onReady (registered later) starts the sessions
  app.addHook('onReady', async () => {
    const n = await ingest.recover().catch((err: unknown) => { app.log.error({ err }, 'status-viewers-update after the restart failed'); return 0 })
    if (n > 0) app.log.info({ statuses: n }, 'status-viewers-update written for the statuses viewed just before the restart')
  })
  // onClose runs before the database plugin's (reverse order), after the platform ended its sockets (preClose)
  app.addHook('onClose', async () => { ingest.stop() })
}, { name: 'viewer-ingest', dependencies: ['db', 'domain-events'] })
