import { Waiters } from '../async.js'
import type { PlatformLogger as Logger } from '../logger.js'
import type { ConnectionStatus, ConnectionStatusChange } from '../types.js'

/**
 * A session's life. `connecting` and `linking` have a socket that is not open yet (linked or not);
 * `reconnecting` waits out a backoff; `stopped` and `logged-out` want no socket until started again;
 * `removing` logs the device out without a word to clients; `removed` refuses everything.
 */
export type SessionState = 'stopped' | 'connecting' | 'linking' | 'open' | 'reconnecting' | 'logged-out' | 'removing' | 'removed'

const NEXT: Record<SessionState, readonly SessionState[]> = {
  stopped: ['connecting', 'linking', 'removing', 'removed'],
  connecting: ['connecting', 'linking', 'open', 'reconnecting', 'stopped', 'logged-out', 'removing', 'removed'],
  linking: ['connecting', 'linking', 'open', 'reconnecting', 'stopped', 'logged-out', 'removing', 'removed'],
  open: ['connecting', 'linking', 'reconnecting', 'removing', 'removed'],
  reconnecting: ['connecting', 'linking', 'reconnecting', 'stopped', 'logged-out', 'removing', 'removed'],
  'logged-out': ['connecting', 'linking', 'removing', 'removed'],
  // the logout on removal connects, but the session does not come back to life for it
  removing: ['removed'],
  removed: []
}

/** what clients see of each state */
const REPORTED: Record<SessionState, ConnectionStatus> = {
  stopped: 'close',
  connecting: 'connecting',
  linking: 'connecting',
  open: 'open',
  reconnecting: 'close',
  'logged-out': 'logged-out',
  removing: 'close',
  removed: 'close'
}

/** What `connection-status` tells of a session in `status` (its own number only while open). */
export function statusChange (sessionId: string, status: ConnectionStatus, ownNumber: string | null, reason?: string): ConnectionStatusChange {
  const connected = status === 'open'
  return { sessionId, connected, status, ownNumber: connected ? ownNumber : null, ...(reason !== undefined ? { reason } : {}) }
}

/** The one place a session's state changes; `onStatus` hears when the status clients see changes. */
export class SessionStateMachine {
  #state: SessionState = 'stopped'
  /** re-checked on every change of state or socket */
  readonly waiters = new Waiters()

  /** `recorded`: the caller recorded the change with a write of its own (see `announces`) */
  constructor (private readonly log: Logger, private readonly onStatus: (status: ConnectionStatus, reason: string | undefined, recorded: boolean) => void) {}

  get current (): SessionState {
    return this.#state
  }

  get status (): ConnectionStatus {
    return REPORTED[this.#state]
  }

  is (state: SessionState): boolean {
    return this.#state === state
  }

  /** a socket is wanted: the session is not stopped, logged out or being removed */
  wantsSocket (): boolean {
    return this.#state === 'connecting' || this.#state === 'linking' || this.#state === 'open' || this.#state === 'reconnecting'
  }

  /** removing or removed: nothing is told to clients any more */
  muted (): boolean {
    return this.#state === 'removing' || this.#state === 'removed'
  }

  /** whether move(next) would tell clients a new status now (a write that goes before the move records it) */
  announces (next: SessionState): boolean {
    const from = this.#state
    return NEXT[from].includes(next) && (REPORTED[next] !== REPORTED[from] || REPORTED[next] === 'logged-out')
  }

  /** Tells clients the status they see now again (after something else told them otherwise). */
  restate (reason: string): void {
    this.onStatus(REPORTED[this.#state], reason, false)
  }

  move (next: SessionState, reason?: string, recorded = false): void {
    const from = this.#state
    if (!NEXT[from].includes(next)) {
      this.log.debug({ from, to: next }, 'state change refused')
      this.waiters.notify()
      return
    }
    const announced = this.announces(next)
    this.#state = next
    this.waiters.notify()
    if (announced) this.onStatus(REPORTED[next], reason, recorded)
  }
}
