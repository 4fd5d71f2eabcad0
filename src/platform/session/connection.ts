import makeWASocket, {
  Browsers,
  type AuthenticationState,
  type proto,
  type SocketConfig,
  type WASocket
} from '@whiskeysockets/baileys'
import type { Config } from '../../config.js'
import { withTimeout } from '../async.js'
import type { PlatformLogger as Logger } from '../logger.js'
import { forgetHalfLink } from './linking.js'
import { StanzaIntakes } from './intakes.js'
import { gateSends } from '../send-gate.js'
import { releasePendingQueries, shareKeyTransactions } from '../baileys/index.js'
import { watchIdentityChanges } from '../baileys/status-key-memory.js'
import type { Attempt } from './attempt.js'
import type { ConnectionDeps, ConnectionEvents } from './connection-deps.js'
import { SessionNotices } from './notices.js'
import { Backoff } from './reconnect.js'

export type { Attempt, ConnectionDeps, ConnectionEvents }

export interface SocketOptions {
  auth: AuthenticationState
  wa: Config['wa']
  logger: Logger
  /** a message we sent, for the platform's retry requests */
  getMessage: (id: string) => proto.IMessage | undefined
  /** Baileys' signal repository, wrapped to commit reactions and replies before their ack (interactions.ts) */
  makeSignalRepository?: SocketConfig['makeSignalRepository']
  /** every socket's key transactions in the process' one context (false: SPEED_TRICKS_OFF shared-key-transactions, Baileys' own per socket) */
  sharedKeyTransactions: boolean
}

export function createSocket ({ auth, wa, logger, getMessage, makeSignalRepository, sharedKeyTransactions }: SocketOptions): WASocket {
  const sock = makeWASocket({
    auth,
    waWebSocketUrl: wa.websocketUrl,
    ...(wa.version !== null ? { version: wa.version } : {}),
    logger,
    browser: Browsers.ubuntu('Chrome'),
    markOnlineOnConnect: false,
    syncFullHistory: false,
    shouldSyncHistoryMessage: () => false,
    generateHighQualityLinkPreview: false,
    getMessage: async (key) => key.id == null ? undefined : getMessage(key.id),
    ...(makeSignalRepository !== undefined ? { makeSignalRepository } : {})
  })
  // before anything awaits: no transaction has run yet (key-transactions.ts)
  if (sharedKeyTransactions) shareKeyTransactions(sock, auth.keys, logger)
  sock.ev.on('connection.update', (update) => { if (update.connection === 'close') setImmediate(() => { releasePendingQueries(sock) }) })
  // a contact's new identity rotates the status sender key (status-key-memory.ts)
  watchIdentityChanges(sock, logger)
  return sock
}

/**
 * A session's socket: never two at once. Socket events carry the Attempt they came from and are
 * ignored once that attempt is no longer current.
 */
export class Connection {
  #attempt: Attempt | null = null
  #gen = 0
  readonly #intakes: StanzaIntakes
  readonly #notices: SessionNotices
  readonly backoff: Backoff

  constructor (private readonly deps: ConnectionDeps) {
    this.#intakes = new StanzaIntakes(deps)
    this.#notices = new SessionNotices(deps)
    this.backoff = new Backoff(deps.timing.reconnectBaseMs, deps.timing.reconnectMaxMs)
  }

  get attempt (): Attempt | null {
    return this.#attempt
  }

  /** a newer socket took over since `attempt` closed */
  superseded (attempt: Attempt): boolean {
    return attempt.gen !== this.#gen || this.#attempt !== null
  }

  /** Replaces the socket with a new one; true when it logs in to a linked account. */
  async open (): Promise<boolean> {
    const { auth, wa, baileysLogger, sessionId, events } = this.deps
    this.backoff.cancel()
    await this.close()
    // a write failed (the gate dropped the last socket): this one starts from what the database holds
    await auth.recover()
    const linked = auth.isLinked()
    if (!linked) forgetHalfLink(auth)
    const state = auth.state
    const sock = createSocket({
      auth: state,
      wa,
      logger: baileysLogger.child({ sessionId }),
      getMessage: (id) => this.deps.sender.sentMessage(id),
      makeSignalRepository: this.#intakes.interactions.makeSignalRepository,
      sharedKeyTransactions: this.deps.sharedKeyTransactions
    })
    const attempt: Attempt = { gen: ++this.#gen, sock, ready: false, open: false, codeRequested: false, codeChain: Promise.resolve() }
    this.#attempt = attempt
    // nothing reaches the platform before the auth writes it depends on are committed
    gateSends(sock, {
      pending: () => auth.writesPending(),
      onRefused: () => { this.deps.log.error({ sessionId }, 'auth state could not be stored: connection dropped, it reconnects from what is stored') }
    })

    sock.ev.on('creds.update', () => { void auth.saveCreds(state.creds) })
    sock.ev.on('connection.update', (update) => {
      if (attempt !== this.#attempt) return
      if (update.qr !== undefined) {
        attempt.ready = true
        this.deps.waiters.notify()
        events.onQr(attempt, update.qr)
      }
      if (update.isNewLogin === true) events.onNewLogin()
      if (update.connection === 'open') {
        attempt.open = true
        this.backoff.reset()
        // views stored under a LID by an earlier run may be mappable by now
        this.#intakes.receipts.scheduleLookup()
        this.#intakes.phone?.onOpen(sock)
        events.onOpen(attempt)
      } else if (update.connection === 'close') {
        this.#attempt = null
        events.onClose(attempt, update.lastDisconnect?.error)
      }
    })
    // receipts and rejections are facts even from a socket being replaced: not filtered by attempt
    this.#intakes.listen(sock)
    this.#notices.watch(sock)
    sock.ev.on('messages.update', (updates) => { if (this.deps.live()) this.deps.sender.onMessagesUpdate(updates) })
    return linked
  }

  /** The account was logged out: what its phone shared is forgotten. */
  forgetPhone (): void {
    this.#intakes.phone?.forget()
  }

  /** Ends the current socket; its late events are ignored because it is no longer current. */
  async close (): Promise<void> {
    this.#intakes.receipts.pause()
    const attempt = this.#attempt
    if (attempt === null) return
    this.#attempt = null
    this.#gen++
    this.deps.waiters.notify()
    await withTimeout(attempt.sock.end(undefined), this.deps.timing.socketEndTimeoutMs, 'socket close handshake timed out')
      .catch((err: unknown) => { this.deps.log.debug({ err }, 'socket end') })
  }

  /** Logs the linked device out, connecting first when no socket is open; never throws. */
  async logOut (): Promise<void> {
    const { logoutTimeoutMs } = this.deps.timing
    try {
      let sock = this.#attempt?.open === true ? this.#attempt.sock : undefined
      if (sock === undefined) {
        await this.open()
        sock = await this.deps.waiters.until(() => {
          if (this.#attempt === null) throw new Error('connection closed')
          return this.#attempt.open ? this.#attempt.sock : undefined
        }, logoutTimeoutMs, 'an open connection to log out')
      }
      await withTimeout(sock.logout(), logoutTimeoutMs, 'logout timed out')
      this.deps.log.info('device logged out')
    } catch (err) {
      this.deps.log.warn({ err }, 'could not log the device out; removing its auth state anyway')
    }
  }
}
