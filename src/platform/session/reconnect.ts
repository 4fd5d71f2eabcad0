import { DisconnectReason } from '@whiskeysockets/baileys'
import { backoffDelay } from '../async.js'
import type { PlatformLogger as Logger } from '../logger.js'

// What a session does after its socket closed, and when it reconnects.

/** The reason `connection-status` gives for a close asking the client to back off (a 429: stream error or failure). */
export const RATE_LIMITED = 'rate-limited'

/**
 * Rungs a 429 adds to the reconnect ladder (each doubles the delay): `<stream:error code="429">` asks the client
 * to back off and names no delay. oxidezap/whatsapp-rust PR #353 (2026-03-14, from WA Web's WAWebHandleStreamError)
 * "increase[s] backoff by 5 fibonacci steps", kept by PR #1263 (2026-08-10, which reports it as an event and
 * measures the first such reconnect at 8.4 s; it notes WA Web itself adds no jump-start), and PR #965 lets "an
 * explicit penalty (429 rate-limit …) survive" the next reset. Five Fibonacci steps from 1 s are 8 s: three
 * doublings of this ladder's base (RECONNECT base 1 s: 8-10 s instead of 1-1.25 s).
 */
export const RATE_LIMIT_RUNGS = 3

/** What `connection-status` says of a close: `rate-limited` for a 429, else the error's message. */
export function closeReason (error: Error | undefined): string {
  const code = (error as { output?: { statusCode?: unknown } } | undefined)?.output?.statusCode
  if (code === 429) return RATE_LIMITED
  return error?.message ?? 'closed'
}

/** What a session does after its socket closed. */
export type AfterClose = 'logged-out' | 'restart' | 'replaced' | 'link-expired' | 'back-off'

export function afterClose (
  error: Error | undefined, linked: boolean, attemptWasReady: boolean
): { next: AfterClose, code: number | undefined, reason: string } {
  const output = (error as { output?: { statusCode?: unknown } } | undefined)?.output
  const code = typeof output?.statusCode === 'number' ? output.statusCode : undefined
  const reason = closeReason(error)
  if (code === DisconnectReason.loggedOut) return { next: 'logged-out', code, reason }
  // sent right after pair-success (and on server restarts): same auth state, new socket, no delay
  if (code === DisconnectReason.restartRequired) return { next: 'restart', code, reason }
  if (code === DisconnectReason.connectionReplaced) return { next: 'replaced', code, reason }
  // the link window of this socket ran out: Baileys ends it with 408 when its QR refs are used up,
  // the server by closing it. The server was healthy (it sent pair-device), so no backoff: a fresh
  // attempt gives a new QR and a new pairing code at once, until the link timeout stops it.
  if (!linked && attemptWasReady) return { next: 'link-expired', code, reason }
  return { next: 'back-off', code, reason }
}

/** Reconnect timing after drops: exponential backoff with jitter, reset once a socket opens. */
export class Backoff {
  #attempt = 0
  #timer: NodeJS.Timeout | null = null
  /** a 429 penalty: the next open does not reset the ladder (RATE_LIMIT_RUNGS) */
  #holdReset = false
  /** the delay of the reconnect scheduled last (null before any) */
  lastDelayMs: number | null = null

  constructor (private readonly baseMs: number, private readonly maxMs: number) {}

  schedule (log: Logger, why: { reason: string, code: number | undefined }, run: () => void): void {
    // the server asked to back off: the ladder jumps RATE_LIMIT_RUNGS and survives the next open
    if (why.code === 429) { this.#attempt += RATE_LIMIT_RUNGS; this.#holdReset = true }
    const delayMs = backoffDelay(this.#attempt++, this.baseMs, this.maxMs)
    this.lastDelayMs = delayMs
    log.warn({ delayMs, attempt: this.#attempt, code: why.code, reason: why.reason }, `connection lost; reconnecting in ${delayMs} ms`)
    this.cancel()
    this.#timer = setTimeout(() => {
      this.#timer = null
      run()
    }, delayMs)
  }

  /** the socket opened: the ladder starts over (not right after a 429: see RATE_LIMIT_RUNGS); `force`: a restart asked for */
  reset (force = false): void {
    if (this.#holdReset && !force) { this.#holdReset = false; return }
    this.#holdReset = false
    this.#attempt = 0
  }

  cancel (): void {
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
  }
}
