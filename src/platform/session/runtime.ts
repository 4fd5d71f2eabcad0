import { generateMessageIDV2, jidNormalizedUser, type WASocket } from '@whiskeysockets/baileys'
import type { Config } from '../../config.js'
import { SerialQueue, withTimeout } from '../async.js'
import type { SessionAuth } from '../auth-state.js'
import type { TypedEmitter } from '../emitter.js'
import { PlatformError } from '../errors.js'
import { pnDigits } from '../lid.js'
import type { PlatformLogger as Logger } from '../logger.js'
import type { AuthMethod, PlatformEventMap, PlatformTiming, SendStatusInput, SendStatusResult, SessionLinks, SessionSnapshot, SessionSpec } from '../types.js'
import { Connection, type Attempt, type ConnectionDeps } from './connection.js'
import { afterClose, closeReason } from './reconnect.js'
import { Linking, type Emit } from './linking.js'
import { relayPolicy, StatusSender, type SenderHost } from './sender.js'
import { openSocket, pairingReady, reachable } from './waits.js'
import { SessionStateMachine, statusChange } from './state.js'

export interface RuntimeDeps extends Pick<ConnectionDeps, 'receiptSink' | 'interactionSink' | 'contactStatusSink' | 'phoneSink' | 'sharedKeyTransactions' | 'expirations' | 'build'>, Pick<SenderHost, 'sentStatuses'> {
  wa: Config['wa']
  logger: Logger
  baileysLogger: Logger
  events: TypedEmitter<PlatformEventMap>
  links: SessionLinks
  timing: PlatformTiming
}

/**
 * One session: its state (see state.ts), socket, linking and sending. Every state change (connect, tear
 * down, reconnect, logout, link timeout) runs one at a time on `lifecycle`; sends queue in the sender.
 */
export class SessionRuntime {
  readonly id: string
  authMethod: AuthMethod
  phoneNumber: string | null
  ownNumber: string | null = null

  private readonly lifecycle = new SerialQueue()
  private readonly log: Logger
  private readonly state: SessionStateMachine
  private readonly connection: Connection
  private readonly linking: Linking
  private readonly sender: StatusSender

  constructor (spec: SessionSpec, private readonly auth: SessionAuth, private readonly deps: RuntimeDeps) {
    this.id = spec.sessionId
    this.authMethod = spec.authMethod
    this.phoneNumber = spec.phoneNumber
    this.log = deps.logger.child({ sessionId: spec.sessionId })
    this.state = new SessionStateMachine(this.log, (status, reason, recorded) => {
      this.emit('connection-status', { ...statusChange(this.id, status, this.ownNumber, reason), ...(recorded ? { recorded } : {}) })
    })
    this.sender = new StatusSender({
      id: this.id, log: this.log, openSocket: this.openSocket, emit: this.emit, sentStatuses: deps.sentStatuses,
      policy: () => relayPolicy(deps.wa.statusChunkSize, deps.timing, deps.wa.statusStanza),
      ownNumber: () => this.ownNumber, newMessageId: () => this.newMessageId()
    })
    this.connection = new Connection({
      ...deps,
      sessionId: this.id, auth, log: this.log, waiters: this.state.waiters,
      live: () => !this.state.is('removed'),
      onReceiptsSeen: (receipts) => { deps.events.emit('status-receipts', { sessionId: this.id, receipts }) },
      sender: this.sender,
      onStatusRetry: (seen) => { this.emit('status-retry', seen) },
      events: {
        onQr: (attempt, qr) => { if (!auth.isLinked() && this.state.wantsSocket()) this.linking.onQr(attempt, qr) },
        onNewLogin: () => { this.linking.clearTimer() },
        onOpen: (attempt) => { this.onOpen(attempt) },
        onClose: (attempt, error) => { this.onClose(attempt, error) }
      }
    })
    this.linking = new Linking({
      id: this.id, authMethod: () => this.authMethod, phoneNumber: () => this.phoneNumber,
      current: () => this.connection.attempt, isOpen: () => this.state.is('open'), emit: this.emit
    }, deps.timing.pairingReadyTimeoutMs)
  }

  /** Connects unless a socket is already in use; also how a pairing-code request starts linking. */
  async start (spec: SessionSpec): Promise<void> {
    await this.lifecycle.run(async () => {
      this.assertPresent()
      this.authMethod = spec.authMethod
      this.phoneNumber = spec.phoneNumber
      if (this.connection.attempt === null) await this.connect()
    })
  }

  async restart (): Promise<void> {
    await this.lifecycle.run(async () => {
      this.assertPresent()
      this.connection.backoff.reset(true)
      this.linking.clearTimer()
      await this.connect()
    })
  }

  /** Logs the device out when linked (connecting briefly if needed), ends the socket, deletes auth rows. */
  async remove (): Promise<void> {
    await this.lifecycle.run(async () => {
      this.assertPresent()
      this.state.move('removing')
      this.clearTimers()
      await this.auth.recover()
      if (this.auth.isLinked()) await this.connection.logOut()
      this.state.move('removed')
      await this.connection.close()
      await this.auth.dispose()
    })
  }

  /** Platform shutdown: no reconnects, no events, sockets ended. */
  async shutdown (): Promise<void> {
    this.state.move('removed')
    this.clearTimers()
    await withTimeout(this.lifecycle.run(async () => { await this.connection.close() }), this.deps.timing.socketEndTimeoutMs * 2, 'shutdown timed out')
      .catch(async (err: unknown) => {
        this.log.warn({ err }, 'session did not shut down in time; ending its socket directly')
        await this.connection.close()
      })
  }

  async updatePhoneNumber (phone: string): Promise<void> {
    await this.lifecycle.run(async () => {
      this.assertPresent()
      this.phoneNumber = phone
      if (!this.auth.isLinked()) this.linking.onPhoneNumberChanged(this.connection.attempt)
    })
  }

  async requestPairingCode (): Promise<string> {
    this.assertPresent()
    return await this.linking.request({
      open: this.state.is('open'),
      linked: this.auth.isLinked(),
      ensureSocket: async () => { await this.start({ sessionId: this.id, authMethod: this.authMethod, phoneNumber: this.phoneNumber }) },
      // waited for outside the lifecycle queue: an expiring attempt must be able to reconnect meanwhile
      ready: async () => await pairingReady(this.state, this.connection, this.deps.timing.pairingReadyTimeoutMs)
    })
  }

  /** a socket for a linked account is on its way to open (what a restore waits for) */
  connectingLinked (): boolean { return this.state.is('connecting') }

  /** open, or a linked account between two sockets that it opens again by itself (waits.ts reachable) */
  reachable (): boolean { return reachable(this.state, this.auth.isLinked()) }

  snapshot (): SessionSnapshot {
    const status = this.state.status
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
    return generateMessageIDV2(this.connection.attempt?.sock.user?.id ?? this.auth.state.creds.me?.id)
  }

  async sendStatus (input: SendStatusInput): Promise<SendStatusResult> {
    this.assertPresent()
    if (!this.reachable()) throw new PlatformError('NOT_CONNECTED')
    return await this.sender.send(input)
  }

  /** An open socket for a like, a reply or a read receipt: now, or once a session coming back opened (waits.ts). */
  async openSock (): Promise<WASocket> {
    this.assertPresent()
    if (!this.reachable()) throw new PlatformError('NOT_CONNECTED')
    return await this.openSocket()
  }

  /** Revokes a status for the JIDs it went to; false when the platform could not be told. */
  async revokeStatus (messageId: string, recipientJids: string[]): Promise<boolean> {
    this.assertPresent()
    if (!this.state.is('open')) return false
    return await this.sender.revoke(messageId, recipientJids)
  }

  private async connect (): Promise<void> {
    const linked = await this.connection.open()
    this.linking.clearCodes()
    if (!linked) this.armLinkTimer()
    this.state.move(linked ? 'connecting' : 'linking')
  }

  private onOpen (attempt: Attempt): void {
    this.linking.clearTimer()
    const me = attempt.sock.user
    this.ownNumber = pnDigits(me?.id)
    const ownLid = me?.lid === undefined ? null : jidNormalizedUser(me.lid)
    this.linking.clearCodes()
    // the row and the announcement that will follow are written together (the service's event log)
    const change = this.state.announces('open') ? statusChange(this.id, 'open', this.ownNumber) : null
    const announce = (stored: boolean): void => {
      // an asynchronous database answered after this socket closed or was replaced: it is not open any more,
      // but the open recorded with the row reaches clients all the same, so they are told what it is now
      if (this.connection.attempt !== attempt || !attempt.open) {
        if (stored && change !== null && !this.state.is('open')) this.state.restate('closed while being recorded open')
        return
      }
      this.log.info({ ownNumber: this.ownNumber }, 'connected')
      this.state.move('open', undefined, stored && change !== null)
    }
    // the row says linked before the session is announced open
    void this.store('could not store the linked account', async () => { await this.deps.links.markLinked(this.id, this.ownNumber, ownLid, change) }).then(announce)
  }

  private onClose (attempt: Attempt, error: Error | undefined): void {
    if (this.state.is('open')) this.state.move('reconnecting', closeReason(error))
    this.state.waiters.notify()
    this.later('reconnect failed', async () => { await this.afterClose(attempt, error) })
  }

  private async afterClose (attempt: Attempt, error: Error | undefined): Promise<void> {
    if (this.connection.superseded(attempt) || !this.state.wantsSocket()) return
    // a write failed and the gate dropped the socket: what comes next is decided on what the database holds (a
    // pairing whose creds were not stored is no linked account: a fresh link attempt, not a login the platform refuses)
    await this.auth.recover()
    const { next, code, reason } = afterClose(error, this.auth.isLinked(), attempt.ready)
    switch (next) {
      case 'logged-out':
        await this.onLoggedOut()
        break
      case 'restart':
      case 'link-expired':
        this.log.info({ code, reason }, next === 'restart' ? 'platform asked for a restart; reconnecting' : 'link attempt expired; starting a fresh one')
        await this.connect()
        break
      case 'replaced':
        this.log.error('another client replaced this connection; not reconnecting')
        this.state.move('stopped', 'replaced by another connection')
        break
      case 'back-off':
        this.state.move('reconnecting', reason)
        this.connection.backoff.schedule(this.log, { reason, code }, () => {
          this.later('reconnect failed', async () => {
            if (this.state.wantsSocket() && this.connection.attempt === null) await this.connect()
          })
        })
    }
  }

  private async onLoggedOut (): Promise<void> {
    this.clearTimers()
    await this.connection.close()
    await this.auth.reset()
    this.connection.forgetPhone()
    const change = this.state.announces('logged-out') ? statusChange(this.id, 'logged-out', null, 'logged out') : null
    const stored = await this.store('could not mark the session unlinked', async () => { await this.deps.links.markUnlinked(this.id, change) })
    this.ownNumber = null
    this.linking.clearCodes()
    this.log.warn('logged out by the platform; auth state cleared, the session can be linked again')
    this.state.move('logged-out', 'logged out', stored && change !== null)
  }

  private armLinkTimer (): void {
    const ms = this.deps.wa.linkTimeoutMs
    this.linking.armTimer(ms, () => { this.later('link timeout handling failed', async () => { await this.expireLink(ms) }) })
  }

  private async expireLink (ms: number): Promise<void> {
    if (!this.state.wantsSocket() || this.state.is('open') || this.auth.isLinked()) return
    this.connection.backoff.cancel()
    await this.connection.close()
    this.linking.clearCodes()
    const seconds = Math.round(ms / 1000)
    this.log.info({ seconds }, 'linking timed out; no more codes until restarted')
    this.state.move('stopped', 'link-timeout')
    this.linking.announceTimeout(seconds)
  }

  /** An open socket for the sender (waits.ts: openSocket) */
  private readonly openSocket = (lost?: WASocket): Promise<WASocket> => openSocket(this.state, this.connection, this.deps.timing.sendOpenWaitMs, lost)

  private readonly emit: Emit = (event, payload) => { if (!this.state.muted()) this.deps.events.emit(event, payload) }

  private assertPresent (): void { if (this.state.is('removed')) throw new PlatformError('SESSION_NOT_FOUND') }

  /** Queues work a socket event or timer started; its failure is logged, nobody awaits it. */
  private later (failure: string, task: () => Promise<void>): void {
    this.lifecycle.run(task).catch((err: unknown) => { this.log.error({ err }, failure) })
  }

  /** Runs a write; a failure is logged (it must not stop the session). Whether it was written (never rejects). */
  private async store (failure: string, write: () => Promise<void>): Promise<boolean> {
    return await write().then(() => true, (err: unknown) => { this.log.error({ err }, failure); return false })
  }

  private clearTimers (): void {
    this.connection.backoff.cancel()
    this.linking.clearTimer()
  }
}
