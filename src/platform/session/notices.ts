import type { WASocket } from '@whiskeysockets/baileys'
import type { SessionAuth } from '../auth-state.js'
import { onClientExpiration, onRefreshLidAck, refreshLidMapping } from '../baileys/notices.js'
import type { PlatformLogger as Logger } from '../logger.js'
import { keepClientExpiration, storedClientExpiration, type ClientExpirations } from '../notices.js'

// A session's part of what the server announces (issue 39 item 5; the stanzas: baileys/notices.ts).

export interface SessionNoticeDeps {
  sessionId: string
  auth: SessionAuth
  log: Logger
  /** this node's announced expirations */
  expirations: ClientExpirations
  /** the client build the service runs (WA_VERSION or Baileys' own), what an announced expiration is about */
  build: string
}

export class SessionNotices {
  constructor (private readonly deps: SessionNoticeDeps) {
    this.restore()
  }

  /**
   * What an earlier run kept in the session's creds for this build (a restart still warns). Logged out, the
   * creds start over, but what is in memory stays: the date is about the build, not the account. A removed
   * session's no longer counts (the platform counts only its running sessions).
   */
  restore (): void {
    const { auth, build, expirations, sessionId } = this.deps
    const at = storedClientExpiration(auth.state.creds, build)
    if (at !== null) expirations.set(sessionId, at)
  }

  /** Listens to a new socket for the client expiration and for acks asking for a LID refresh. */
  readonly watch = (sock: WASocket): void => {
    const { auth, build, expirations, log, sessionId } = this.deps
    onClientExpiration(sock, (expiresAt) => {
      log.warn({ clientExpiresAt: expiresAt.toISOString() }, 'the platform announced when it stops accepting this client build')
      expirations.set(sessionId, expiresAt)
      // kept with the creds (auth_creds), written like every creds change (a stale socket's are dropped)
      keepClientExpiration(auth.state.creds, expiresAt, build)
      void auth.saveCreds(auth.state.creds)
    })
    onRefreshLidAck(sock, (peer) => {
      refreshLidMapping(sock, peer).then(
        (found) => { log.info({ refreshed: found !== null }, 'the platform marked a LID mapping stale; queried it again') },
        (err: unknown) => { log.warn({ err }, 'could not query a stale LID mapping again') }
      )
    })
  }
}
