import type { FastifyBaseLogger } from 'fastify'
import type { ViewerRecord } from '../../src/db/stores/viewers.js'
import type { NewEvent } from '../../src/db/stores/events.js'
import { toLogRow } from '../events/log.js'
import { toViewer } from '../../src/api-shapes.js'

/** At most one status-viewers-update per status per this window (the last state always goes out). */
export const VIEWERS_UPDATE_MS = 200
/** a longer list's window is VIEWERS_UPDATE_MS per this many viewers begun (see windowMs) */
export const VIEWERS_PER_WINDOW = 1000
/** and at most this long */
export const VIEWERS_UPDATE_MAX_MS = 5000

/**
 * The window after an update of `listed` viewers. Each update reads, serialises, logs and sends the whole
 * list to every client, so its cost grows with the list: 5,000 viewers are ~0.6 MB, and that work every
 * 200 ms held up the commits of the receipts arriving meanwhile (receipt → status-viewers-added p99 at
 * 1,000 receipts/s: bench/NOTES.md, "the live path"). The window grows with the list instead, so a status's
 * updates cost about as much per second at any reach; status-viewers-added still carries every new viewer
 * as it is committed, and the last state still always goes out.
 */
export function windowMs (listed: number): number {
  return Math.min(VIEWERS_UPDATE_MAX_MS, VIEWERS_UPDATE_MS * Math.max(1, Math.ceil(listed / VIEWERS_PER_WINDOW)))
}

/** statuses changed by one commit, by id, with their sessions */
export type Changed = ReadonlyMap<number, { sessionId: string }>
const NONE: Changed = new Map()

/**
 * A status's window: from its last update until the timer; `dirty` once a commit changed it meanwhile;
 * `listed` the length of the list its last update carried (the window's length: windowMs).
 */
interface Window { sessionId: string, timer: NodeJS.Timeout | null, dirty: boolean, listed: number }

/** A status's update event with its full list; none for an empty list (the status is gone, its viewers with it). */
function updateEvents (statusId: number, sessionId: string, rows: ViewerRecord[]): NewEvent[] {
  return rows.length === 0 ? [] : [toLogRow('status-viewers-update', { sessionId, statusId: String(statusId), viewers: rows.map(toViewer) })]
}

/**
 * status-viewers-update (a status's full viewer list), at most one per status per window: one right away
 * for a change, then, when it changed again meanwhile, one when the window ends, with the state then.
 *
 * The first is written in the transaction of the commit that made the change (receipts, a LID merge):
 * inside it, `claim` takes the changed statuses that have no window (the caller reads their lists there
 * and appends updateEvents), and after it `afterCommit` starts their windows and marks the others the commit
 * changed dirty. A window that ends dirty gets its update from `trailing`, which reads the list and
 * appends the event in a transaction of its own: the changes it shows are committed before it (and logged
 * as status-viewers-added with them). The next window starts once that update is written.
 */
export function createViewersUpdates (trailing: (statusId: number, sessionId: string) => Promise<void>, log: FastifyBaseLogger) {
  const windows = new Map<number, Window>()
  let closed = false

  /** Inside a commit: the changed statuses whose update goes in this commit (their windows are taken). */
  function claim (changed: Changed): Changed {
    let mine: Map<number, { sessionId: string }> | null = null
    if (closed) return NONE
    for (const [statusId, { sessionId }] of changed) {
      if (windows.has(statusId)) continue
      windows.set(statusId, { sessionId, timer: null, dirty: false, listed: 0 })
      mine ??= new Map()
      mine.set(statusId, { sessionId })
    }
    return mine ?? NONE
  }

  /** After the commit: `claimed` as claim answered, `changed` what it committed (nothing when it failed). */
  function afterCommit (claimed: Changed, changed: Changed = NONE): void {
    for (const statusId of claimed.keys()) arm(statusId)
    for (const [statusId, { sessionId }] of changed) {
      if (claimed.has(statusId) || closed) continue
      const open = windows.get(statusId)
      if (open !== undefined) { open.dirty = true; continue }
      // its window ended while this commit ran (it waited for the connection), without it: an update now
      windows.set(statusId, { sessionId, timer: null, dirty: true, listed: 0 })
      setImmediate(() => { void end(statusId) })
    }
  }

  function arm (statusId: number): void {
    const open = windows.get(statusId)
    if (open === undefined) return
    if (closed) { windows.delete(statusId); return }
    open.timer = setTimeout(() => { void end(statusId) }, windowMs(open.listed))
  }

  async function end (statusId: number): Promise<void> {
    const open = windows.get(statusId)
    if (open === undefined) return
    open.timer = null
    if (!open.dirty || closed) { windows.delete(statusId); return }
    open.dirty = false
    try {
      await trailing(statusId, open.sessionId)
    } catch (err) {
      if (closed) return
      // tried again when the next window ends
      open.dirty = true
      log.warn({ err, statusId }, 'could not write status-viewers-update')
    }
    arm(statusId)
  }

  /** A window's update events (updateEvents), its list's length noted for the window that follows. */
  function eventsOf (statusId: number, sessionId: string, rows: ViewerRecord[]): NewEvent[] {
    const open = windows.get(statusId)
    if (open !== undefined) open.listed = rows.length
    return updateEvents(statusId, sessionId, rows)
  }

  return {
    claim,
    afterCommit,
    eventsOf,
    /** Stops the timers: the updates of windows still open are not written (a restart writes them: viewer-ingest recover). */
    stop (): void {
      closed = true
      for (const { timer } of windows.values()) if (timer !== null) clearTimeout(timer)
      windows.clear()
    }
  }
}
