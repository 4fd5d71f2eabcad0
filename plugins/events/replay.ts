import type { FastifyBaseLogger } from 'fastify'
import type { Server, Socket } from 'socket.io'
import type { EventLog, LogEntry } from './log.js'

/** Sockets catching up are in this room; live events skip it (broadcaster) until they have caught up. */
export const REPLAYING_ROOM = 'event-log:replaying'
/** Catch-up reads this many events at a time. */
const REPLAY_PAGE = 500

/**
 * The sessions a socket may hear of (null: all): `socket.data.sessionIds`, which the handshake sets from the
 * key and `auth.sessionIds` (plugins/broadcaster/subscriptions.ts).
 */
export function socketSessions (socket: Socket): readonly string[] | null {
  const ids = (socket.data as { sessionIds?: unknown } | undefined)?.sessionIds
  return Array.isArray(ids) ? ids.filter((s): s is string => typeof s === 'string') : null
}

/** `auth.after` from the handshake: undefined when absent, null when not an event id. */
export function afterOf (socket: Socket): number | null | undefined {
  const raw = (socket.handshake.auth as { after?: unknown } | undefined)?.after
  if (raw === undefined || raw === null || raw === '') return undefined
  const n = typeof raw === 'string' && /^[0-9]{1,15}$/.test(raw) ? Number(raw) : raw
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : null
}

export const payloadOf = (e: LogEntry): Record<string, unknown> => ({ ...e.data, eventId: e.eventId })

/**
 * Catch-up on socket.io: a client that connects with `auth.after = <eventId>` first receives every logged
 * event after it (its sessions'), in order, then live ones, with no gap and no duplicate.
 *
 * How: the socket joins REPLAYING_ROOM as it connects, so live emits skip it. It is sent the log's rows up
 * to the feed's head (the last id the live emits have reached) page by page; when a page ends at a head
 * that is still the head, it leaves the room in the same synchronous step: every event up to the head came
 * by catch-up, every later one comes live. A connection socket.io recovered (within its own two-minute
 * window) already got what it missed and is not replayed.
 */
export function attachReplay (io: Server, eventLog: EventLog, log: FastifyBaseLogger): void {
  io.use((socket, next) => {
    if (afterOf(socket) === null) { next(new Error('auth.after must be an eventId (a non-negative integer)')); return }
    next()
  })
  io.on('connection', (socket) => {
    const after = afterOf(socket)
    if (after === undefined || after === null || socket.recovered) return
    void socket.join(REPLAYING_ROOM)
    replay(socket, after).catch((err: unknown) => {
      log.warn({ err }, 'event catch-up failed; disconnecting the client so it retries')
      socket.disconnect(true)
    })
  })

  async function replay (socket: Socket, from: number): Promise<void> {
    const sessionIds = socketSessions(socket)
    let last = from
    for (;;) {
      const head = eventLog.head()
      const page = last >= head ? [] : await eventLog.page(last, REPLAY_PAGE, { upTo: head, sessionIds })
      if (!socket.connected) return
      for (const e of page) socket.emit(e.type, payloadOf(e))
      if (page.length === REPLAY_PAGE) { last = page[page.length - 1].eventId; continue }
      last = Math.max(last, head)
      // nothing was emitted live since the read began: hand over to the live emits now
      if (eventLog.head() === head) {
        void socket.leave(REPLAYING_ROOM)
        return
      }
    }
  }
}
