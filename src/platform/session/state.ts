import { Waiters } from '../async.js'
import type { PlatformLogger as Logger } from '../logger.js'
import type { ConnectionStatus } from '../types.js'

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

/** The one place a session's state changes; `onStatus` hears when the status clients see changes. */
export class SessionStateMachine {
  #state: SessionState = 'stopped'
  /** re-checked on every change of state or socket */
  readonly waiters = new Waiters()

  constructor (private readonly log: Logger, private readonly onStatus: (status: ConnectionStatus, reason?: string) => void) {}

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

  move (next: SessionState, reason?: string): void {
    const from = this.#state
    if (!NEXT[from].includes(next)) {
      this.log.debug({ from, to: next }, 'state change refused')
      this.waiters.notify()
      return
    }
    this.#state = next
    this.waiters.notify()
    const status = REPORTED[next]
    if (status !== REPORTED[from] || status === 'logged-out') this.onStatus(status, reason)
  }
}
