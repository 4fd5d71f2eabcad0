import type { DbHandle } from '../../src/db/connection.js'
import type { NewEvent } from '../../src/db/repositories/events.js'
import { sessionLinksFor } from '../../src/db/repositories/session-links.js'
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
export function loggedSessionLinks (handle: DbHandle, eventLog: Pick<EventLog, 'committed' | 'appended'>): SessionLinks {
  const links = sessionLinksFor(handle)
  function write (change: ConnectionStatusChange | null, run: (events: NewEvent[]) => void | Promise<void>): void | Promise<void> {
    if (change === null) return run([])
    const events = [toLogRow('connection-status', connectionStatusPayload(change))]
    // after the session's earlier changes queued to the log on their own, so ids follow the changes
    return eventLog.appended().then(async () => { await run(events) }).then(() => { eventLog.committed() })
  }
  return {
    list: links.list,
    get: links.get,
    markLinked: (id, ownNumber, ownLid, change) => write(change, (events) => links.markLinked(id, ownNumber, ownLid, events)),
    markUnlinked: (id, change) => write(change, (events) => links.markUnlinked(id, events))
  }
}
