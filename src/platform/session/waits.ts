import type { WASocket } from '@whiskeysockets/baileys'
import { socketOpen } from '../baileys/index.js'
import { isPlatformError, PlatformError } from '../errors.js'
import type { Attempt, Connection } from './connection.js'
import type { SessionStateMachine } from './state.js'

// What a session's callers wait for, outside its lifecycle queue (an expiring attempt or a reconnect must
// be able to run meanwhile): a socket that accepts a pairing code request, an open socket for a send, a like,
// a reply or a read receipt.

/** The attempt whose socket accepts a pairing code request; throws when there will be none. */
export async function pairingReady (state: SessionStateMachine, connection: Connection, timeoutMs: number): Promise<Attempt> {
  return await state.waiters.until(() => {
    if (state.is('removed')) throw new PlatformError('SESSION_NOT_FOUND')
    if (state.is('open')) throw new PlatformError('ALREADY_CONNECTED')
    if (!state.wantsSocket()) throw new PlatformError('PAIRING_UNAVAILABLE')
    const attempt = connection.attempt
    return attempt?.ready === true ? attempt : undefined
  }, timeoutMs, 'a socket that accepts a pairing code request')
}

/**
 * An open socket for the sender; waits for a reconnect (at most `waitMs`), gives up when the session
 * stops wanting one (logged out, replaced, removed). `lost` is a socket whose link just broke: it is only
 * returned again while its WebSocket is still open (the error was not a lost link after all).
 */
export async function openSocket (state: SessionStateMachine, connection: Connection, waitMs: number, lost?: WASocket): Promise<WASocket> {
  return await state.waiters.until(() => {
    if (!state.wantsSocket()) throw new PlatformError('NOT_CONNECTED', `WhatsApp is not connected (session ${state.current})`)
    const sock = state.is('open') ? connection.attempt?.sock : undefined
    return sock === lost && (sock === undefined || !socketOpen(sock)) ? undefined : sock
  }, waitMs, 'the session to be connected').catch((err: unknown) => {
    throw isPlatformError(err, 'NOT_CONNECTED') ? err : new PlatformError('NOT_CONNECTED', `WhatsApp is not connected (no reconnect within ${Math.round(waitMs / 1000)} s)`)
  })
}

/**
 * Open, or a linked account between two sockets, which the session opens again by itself: the last one
 * closed (a stream the server ended, a dropped link), or the first after a start is not open yet. A send, a
 * like, a reply or a view goes ahead on such a session (waiting for the socket: openSocket).
 */
export function reachable (state: SessionStateMachine, linked: boolean): boolean {
  return state.is('open') || (linked && (state.is('connecting') || state.is('reconnecting')))
}
