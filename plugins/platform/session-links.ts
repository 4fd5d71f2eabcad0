import type { NewEvent } from '../../src/db/stores/events.js'
import type { SessionStore } from '../../src/db/stores/sessions.js'
import type { ConnectionStatusChange, SessionLinks } from '../../src/platform/types.js'
import type { EventPayloads } from '../../schemas/events.js'
import { toLogRow, type EventLog } from '../events/log.js'

/** The connection-status payload clients get (socket.io, webhooks, the event log). */
export function connectionStatusPayload (e: ConnectionStatusChange): EventPayloads['connection-status'] {
  return { sessionId: e.sessionId, connected: e.connected, status: e.status, ownNumber: e.ownNumber, ...(e.reason !== undefined ? { reason: e.reason } : {}) }
}

/**
 * The platform's session links, with the event log: the connection-status the platform hands over with a
 * row's write (open with the linked account, logged-out with the unlink) is appended in that write's
 * transaction and fed after its commit. The broadcaster logs the changes that store nothing on their own.
 */
export function loggedSessionLinks (sessions: SessionStore, eventLog: Pick<EventLog, 'committed' | 'appended'>): SessionLinks {
  async function write (change: ConnectionStatusChange | null, run: (events: NewEvent[]) => Promise<void>): Promise<void> {
    if (change === null) { await run([]); return }
    // after the session's earlier changes queued to the log on their own, so its ids follow its changes (other
    // sessions' appends are not waited for: a start of many sessions would open them one after the other)
    await eventLog.appended(change.sessionId)
    await run([toLogRow('connection-status', connectionStatusPayload(change))])
    eventLog.committed()
  }
  return {
    get: sessions.storedOne,
    markLinked: async (id, ownNumber, ownLid, change) => {
      await write(change, async (events) => { await sessions.markLinked(id, ownNumber, ownLid, events) })
    },
    markUnlinked: async (id, change) => { await write(change, async (events) => { await sessions.markUnlinked(id, events) }) }
  }
}
