import { generateMessageIDV2, jidNormalizedUser, type ConnectionState, type WASocket } from '@whiskeysockets/baileys'
import type { Config } from '../../config.js'
import { SerialQueue, Waiters, withTimeout } from '../async.js'
import type { SessionAuth } from '../auth-state.js'
import type { TypedEmitter } from '../emitter.js'
import { isPlatformError, PlatformError } from '../errors.js'
import { pnDigits, type LidResolver } from '../lid.js'
import type { PlatformLogger as Logger } from '../logger.js'
import { ReceiptBatcher } from '../receipts.js'
import type { AuthMethod, ConnectionStatus, PlatformEventMap, PlatformTiming, SendStatusInput, SendStatusResult, SessionLinks, SessionSnapshot, SessionSpec } from '../types.js'
import { afterClose, Backoff, createSocket, endSocket, type Attempt } from './connection.js'
import { forgetHalfLink, Linking, messageOf, type Emit } from './linking.js'
import { StatusSender } from './sender.js'

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

export interface RuntimeDeps {
  wa: Config['wa']
  logger: Logger
  baileysLogger: Logger
  events: TypedEmitter<PlatformEventMap>
  links: SessionLinks
  timing: PlatformTiming
}

/**
 * One session: owns its Baileys socket (never two at once), linking, reconnects and sending.
 *
 * State changes (connect, tear down, reconnect, logout, link timeout) run one at a time on `lifecycle`.
 * Socket events carry the Attempt they came from and are ignored once that attempt is no longer current.
 */
export class SessionRuntime {
  readonly id: string
  authMethod: AuthMethod
  phoneNumber: string | null
  ownNumber: string | null = null

  private state: SessionState = 'stopped'
  private readonly lifecycle = new SerialQueue()
  private readonly waiters = new Waiters()
  private readonly log: Logger
  private readonly receipts: ReceiptBatcher
  private readonly linking: Linking
  private readonly sender: StatusSender
  private readonly backoff: Backoff
  private attempt: Attempt | null = null
  /** the last socket's LID store (it reads our key store, so it still works after that socket closed) */
  private lidMapping: LidResolver | null = null
  private gen = 0

  constructor (spec: SessionSpec, private readonly auth: SessionAuth, private readonly deps: RuntimeDeps) {
    this.id = spec.sessionId
    this.authMethod = spec.authMethod
    this.phoneNumber = spec.phoneNumber
    this.log = deps.logger.child({ sessionId: spec.sessionId })
    this.backoff = new Backoff(deps.timing.reconnectBaseMs, deps.timing.reconnectMaxMs)
    this.receipts = new ReceiptBatcher({
      emit: (receipts) => { if (this.state !== 'removed') this.deps.events.emit('status-receipts', { sessionId: this.id, receipts }) },
      lidResolver: () => this.lidMapping,
      ownNumber: () => this.ownNumber ?? pnDigits(this.auth.state.creds.me?.id),
      live: () => this.state !== 'removed',
      logger: this.log
    })
    this.linking = new Linking({
      id: this.id,
      authMethod: () => this.authMethod,
      phoneNumber: () => this.phoneNumber,
      current: () => this.attempt,
      isOpen: () => this.state === 'open',
      emit: this.emit
    }, deps.timing.pairingReadyTimeoutMs)
    this.sender = new StatusSender({
      id: this.id,
      log: this.log,
      policy: () => {
        const t = this.deps.timing
        return { chunkSize: this.deps.wa.statusChunkSize, attempts: t.sendAttempts, retryBaseMs: t.sendRetryBaseMs, retryMaxMs: t.sendRetryMaxMs }
      },
      openSocket: this.openSocket,
      ownNumber: () => this.ownNumber,
      newMessageId: () => this.newMessageId(),
      emit: this.emit
    })
  }

  // ---- public operations (called by the platform) ----

  async start (spec: SessionSpec): Promise<void> {
    await this.lifecycle.run(async () => {
      this.assertPresent()
      this.authMethod = spec.authMethod
      this.phoneNumber = spec.phoneNumber
      if (this.attempt === null) await this.connect()
    })
  }

  async restart (): Promise<void> {
    await this.lifecycle.run(async () => {
      this.assertPresent()
      this.backoff.reset()
      this.linking.clearTimer()
      await this.connect()
    })
  }

  /** Logs the device out when linked (connecting briefly if needed), ends the socket, deletes auth rows. */
  async remove (): Promise<void> {
    await this.lifecycle.run(async () => {
      this.assertPresent()
      this.to('removing')
      this.clearTimers()
      if (this.auth.isLinked()) await this.logoutDevice()
      this.to('removed')
      await this.teardown()
      this.auth.dispose()
    })
  }

  /** Platform shutdown: no reconnects, no events, sockets ended. */
  async shutdown (): Promise<void> {
    this.to('removed')
    this.clearTimers()
    await withTimeout(this.lifecycle.run(async () => { await this.teardown() }), this.deps.timing.socketEndTimeoutMs * 2, 'shutdown timed out')
      .catch(async (err: unknown) => {
        this.log.warn({ err }, 'session did not shut down in time; ending its socket directly')
        await this.teardown()
      })
  }

  async updatePhoneNumber (phone: string): Promise<void> {
    await this.lifecycle.run(async () => {
      this.assertPresent()
      this.phoneNumber = phone
      if (!this.auth.isLinked()) this.linking.onPhoneNumberChanged(this.attempt)
    })
  }

  async requestPairingCode (): Promise<string> {
    this.assertPresent()
    if (this.state === 'open') throw new PlatformError('ALREADY_CONNECTED')
    if (this.authMethod !== 'pairing' || this.phoneNumber === null) throw new PlatformError('PHONE_NOT_SET')
    // linked but reconnecting: the platform would not accept a new link for this device
    if (this.auth.isLinked()) throw new PlatformError('PAIRING_UNAVAILABLE')
    if (this.linking.requested) throw new PlatformError('PAIRING_IN_PROGRESS')
    this.linking.requested = true
    try {
      await this.lifecycle.run(async () => {
        this.assertPresent()
        if (this.attempt === null) await this.connect()
      })
      // waited for outside the lifecycle queue: an expiring attempt must be able to reconnect meanwhile
      let attempt: Attempt
      try {
        attempt = await this.waiters.until(() => {
          this.assertPresent()
          if (this.state === 'open') throw new PlatformError('ALREADY_CONNECTED')
          if (!this.wantsSocket()) throw new PlatformError('PAIRING_UNAVAILABLE')
          return this.attempt?.ready === true ? this.attempt : undefined
        }, this.deps.timing.pairingReadyTimeoutMs, 'a socket that accepts a pairing code request')
      } catch (err) {
        if (isPlatformError(err, 'ALREADY_CONNECTED') || isPlatformError(err, 'SESSION_NOT_FOUND')) throw err
        this.linking.emitPairingError(`Cannot generate pairing code at this time: ${messageOf(err)}`)
        throw new PlatformError('PAIRING_UNAVAILABLE')
      }
      attempt.codeRequested = true
      try {
        return await this.linking.issuePairingCode(attempt)
      } catch {
        throw new PlatformError('PAIRING_UNAVAILABLE')
      }
    } finally {
      this.linking.requested = false
    }
  }

  snapshot (): SessionSnapshot {
    const status = REPORTED[this.state]
    const connected = status === 'open'
    return {
      sessionId: this.id,
      connected,
      status,
      ownNumber: connected ? this.ownNumber : null,
      pairingCode: connected || this.authMethod !== 'pairing' ? null : this.linking.pairingCode,
      qrCode: connected || this.authMethod !== 'qrcode' ? null : this.linking.qrCode
    }
  }

  newMessageId (): string {
    this.assertPresent()
    return generateMessageIDV2(this.attempt?.sock.user?.id ?? this.auth.state.creds.me?.id)
  }

  async sendStatus (input: SendStatusInput): Promise<SendStatusResult> {
    this.assertPresent()
    if (this.state !== 'open' || this.ownNumber === null) throw new PlatformError('NOT_CONNECTED')
    return await this.sender.send(input)
  }

  /** Revokes a status for the JIDs it went to; false when the platform could not be told. */
  async revokeStatus (messageId: string, recipientJids: string[]): Promise<boolean> {
    this.assertPresent()
    if (this.state !== 'open') return false
    return await this.sender.revoke(messageId, recipientJids)
  }

  // ---- state ----

  /** The one place the state changes; clients hear of it when the status they see changes. */
  private to (next: SessionState, reason?: string): void {
    const from = this.state
    if (!NEXT[from].includes(next)) {
      this.log.debug({ from, to: next }, 'state change refused')
      this.waiters.notify()
      return
    }
    this.state = next
    this.waiters.notify()
    const status = REPORTED[next]
    if (status === REPORTED[from] && status !== 'logged-out') return
    const connected = status === 'open'
    this.emit('connection-status', { sessionId: this.id, connected, status, ownNumber: connected ? this.ownNumber : null, ...(reason !== undefined ? { reason } : {}) })
  }

  /** a socket is wanted: the session is not stopped, logged out or being removed */
  private wantsSocket (): boolean {
    return this.state === 'connecting' || this.state === 'linking' || this.state === 'open' || this.state === 'reconnecting'
  }

  private readonly emit: Emit = (event, payload) => {
    if (this.state !== 'removing' && this.state !== 'removed') this.deps.events.emit(event, payload)
  }

  private assertPresent (): void {
    if (this.state === 'removed') throw new PlatformError('SESSION_NOT_FOUND')
  }

  // ---- socket lifecycle (only ever called on the lifecycle queue) ----

  private async connect (): Promise<void> {
    this.backoff.cancel()
    await this.teardown()
    const linked = this.auth.isLinked()
    if (!linked) forgetHalfLink(this.auth)
    const state = this.auth.state
    const sock = createSocket({
      auth: state,
      wa: this.deps.wa,
      logger: this.deps.baileysLogger.child({ sessionId: this.id }),
      getMessage: (id) => this.sender.sentMessage(id)
    })
    const attempt: Attempt = { gen: ++this.gen, sock, ready: false, open: false, codeRequested: false, codeChain: Promise.resolve() }
    this.attempt = attempt
    this.lidMapping = sock.signalRepository.lidMapping
    this.linking.clearCodes()

    sock.ev.on('creds.update', () => { this.auth.saveCreds(state.creds) })
    sock.ev.on('connection.update', (update) => { this.onConnectionUpdate(attempt, update) })
    // receipts and rejections are facts even from a socket being replaced: not filtered by attempt
    this.receipts.listen(sock, () => state.creds.me?.id)
    sock.ev.on('messages.update', (updates) => { if (this.state !== 'removed') this.sender.onMessagesUpdate(updates) })

    if (!linked) this.armLinkTimer()
    this.to(linked ? 'connecting' : 'linking')
  }

  /** Ends the current socket; its late events are ignored because it is no longer `this.attempt`. */
  private async teardown (): Promise<void> {
    const attempt = this.attempt
    if (attempt === null) return
    this.attempt = null
    this.gen++
    this.waiters.notify()
    await endSocket(attempt.sock, this.deps.timing.socketEndTimeoutMs, this.log)
  }

  private onConnectionUpdate (attempt: Attempt, update: Partial<ConnectionState>): void {
    if (attempt !== this.attempt) return
    if (update.qr !== undefined) this.onQr(attempt, update.qr)
    if (update.isNewLogin === true) this.linking.clearTimer()
    if (update.connection === 'open') this.onOpen(attempt)
    else if (update.connection === 'close') this.onClose(attempt, update.lastDisconnect?.error)
  }

  private onQr (attempt: Attempt, qr: string): void {
    attempt.ready = true
    this.waiters.notify()
    if (this.auth.isLinked() || !this.wantsSocket()) return
    this.linking.onQr(attempt, qr)
  }

  private onOpen (attempt: Attempt): void {
    this.linking.clearTimer()
    this.backoff.reset()
    attempt.open = true
    const me = attempt.sock.user
    this.ownNumber = pnDigits(me?.id)
    const ownLid = me?.lid === undefined ? null : jidNormalizedUser(me.lid)
    this.linking.clearCodes()
    try {
      this.deps.links.markLinked(this.id, this.ownNumber, ownLid)
    } catch (err) {
      this.log.error({ err }, 'could not store the linked account')
    }
    this.log.info({ ownNumber: this.ownNumber }, 'connected')
    this.to('open')
  }

  private onClose (attempt: Attempt, error: Error | undefined): void {
    this.attempt = null
    if (this.state === 'open') this.to('reconnecting', error?.message ?? 'closed')
    this.waiters.notify()
    this.lifecycle.run(async () => { await this.afterClose(attempt, error) })
      .catch((err: unknown) => { this.log.error({ err }, 'reconnect failed') })
  }

  private async afterClose (attempt: Attempt, error: Error | undefined): Promise<void> {
    if (attempt.gen !== this.gen || this.attempt !== null) return // a newer socket took over
    if (!this.wantsSocket()) return
    const { next, code, reason } = afterClose(error, this.auth.isLinked(), attempt.ready)
    switch (next) {
      case 'logged-out':
        await this.onLoggedOut()
        break
      case 'restart':
        this.log.info('platform asked for a restart; reconnecting')
        await this.connect()
        break
      case 'replaced':
        this.log.error('another client replaced this connection; not reconnecting')
        this.to('stopped', 'replaced by another connection')
        break
      case 'link-expired':
        this.log.info({ code, reason }, 'link attempt expired; starting a fresh one')
        await this.connect()
        break
      case 'back-off':
        this.to('reconnecting', reason)
        this.backoff.schedule(this.log, { reason, code }, () => {
          this.lifecycle.run(async () => {
            if (this.wantsSocket() && this.attempt === null) await this.connect()
          }).catch((err: unknown) => { this.log.error({ err }, 'reconnect failed') })
        })
    }
  }

  private async onLoggedOut (): Promise<void> {
    this.clearTimers()
    await this.teardown()
    this.auth.reset()
    try {
      this.deps.links.markUnlinked(this.id)
    } catch (err) {
      this.log.error({ err }, 'could not mark the session unlinked')
    }
    this.ownNumber = null
    this.linking.clearCodes()
    this.log.warn('logged out by the platform; auth state cleared, the session can be linked again')
    this.to('logged-out', 'logged out')
  }

  private armLinkTimer (): void {
    const ms = this.deps.wa.linkTimeoutMs
    this.linking.armTimer(ms, () => {
      this.lifecycle.run(async () => { await this.expireLink(ms) })
        .catch((err: unknown) => { this.log.error({ err }, 'link timeout handling failed') })
    })
  }

  private async expireLink (ms: number): Promise<void> {
    if (!this.wantsSocket() || this.state === 'open' || this.auth.isLinked()) return
    this.backoff.cancel()
    await this.teardown()
    this.linking.clearCodes()
    const seconds = Math.round(ms / 1000)
    this.log.info({ seconds }, 'linking timed out; no more codes until restarted')
    this.to('stopped', 'link-timeout')
    this.linking.announceTimeout(seconds)
  }

  private async logoutDevice (): Promise<void> {
    const { logoutTimeoutMs } = this.deps.timing
    try {
      let sock = this.attempt?.open === true ? this.attempt.sock : undefined
      if (sock === undefined) {
        await this.connect()
        sock = await this.waiters.until(() => {
          if (this.attempt === null) throw new Error('connection closed')
          return this.attempt.open ? this.attempt.sock : undefined
        }, logoutTimeoutMs, 'an open connection to log out')
      }
      await withTimeout(sock.logout(), logoutTimeoutMs, 'logout timed out')
      this.log.info('device logged out')
    } catch (err) {
      this.log.warn({ err }, 'could not log the device out; removing its auth state anyway')
    }
  }

  /** An open socket for the sender; waits for a reconnect, gives up when the session stops wanting one. */
  private readonly openSocket = async (): Promise<WASocket> => {
    return await this.waiters.until(() => {
      if (!this.wantsSocket()) throw new PlatformError('NOT_CONNECTED')
      return this.state === 'open' ? this.attempt?.sock : undefined
    }, this.deps.timing.sendOpenWaitMs, 'the session to be connected').catch((err: unknown) => {
      throw isPlatformError(err, 'NOT_CONNECTED') ? err : new PlatformError('NOT_CONNECTED')
    })
  }

  private clearTimers (): void {
    this.backoff.cancel()
    this.linking.clearTimer()
  }
}
