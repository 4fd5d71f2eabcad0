import type { AuthenticationCreds, AuthenticationState } from '@whiskeysockets/baileys'

// What a session's auth state offers the platform (src/platform/auth-state.ts keeps it in the database).

export interface SessionAuth {
  readonly sessionId: string
  /** the state to hand to the next socket; replaced by `reset()` */
  readonly state: AuthenticationState
  /** pair-success stored an account: the next socket logs in instead of registering */
  isLinked: () => boolean
  /** persists `creds` if they are still this session's current creds (a stale socket's are dropped) */
  saveCreds: (creds: AuthenticationCreds) => Promise<void>
  /** deletes every auth row and starts over with fresh creds (after logout) */
  reset: () => Promise<void>
  /** deletes every auth row; later writes from sockets still draining are ignored */
  dispose: () => Promise<void>
  /** forgets the state in memory, rows kept; later writes from sockets still draining are ignored */
  detach: () => void
  /**
   * The phone-number digits Baileys stored for a LID user (its `lid-mapping` keys), read synchronously
   * from the loaded rows: receipts are resolved with it while their stanza is being committed.
   */
  numberForLid: (lidUser: string) => string | null
  /**
   * The session's writes handed over so far and not yet settled: resolves true when they all committed,
   * false when one failed; undefined when none is pending. What the socket's next frame must wait for.
   */
  writesPending: () => Promise<boolean> | undefined
  /**
   * After a write of creds or keys failed: waits for the writes under way and starts over from the rows they
   * committed (the creds Baileys changed in memory and never stored are dropped, so a pairing the platform
   * never heard the answer to is not taken for a linked account); true when it did. Call with no socket running.
   */
  recover: () => Promise<boolean>
}

export interface AuthStore {
  /** loads the session's rows; call before `open` (a session open already keeps what it has) */
  prepare: (sessionId: string) => Promise<void>
  /** the session's auth state; the same object while the process lives, so restarts keep the loaded rows */
  open: (sessionId: string) => SessionAuth
  /** deletes a session's auth rows whether or not it is open */
  clear: (sessionId: string) => Promise<void>
  /**
   * Forgets the open state and its rows in memory, keeping them in the database (another node owns the
   * session now and moves them on); later writes from the socket still draining are ignored. The next
   * open reads the rows again.
   */
  release: (sessionId: string) => void
  /** resolves when every write handed over so far has settled (before the database closes) */
  flush: () => Promise<void>
}
