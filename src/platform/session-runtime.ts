import makeWASocket, {
  Browsers,
  DisconnectReason,
  generateMessageIDV2,
  jidNormalizedUser,
  proto,
  type BinaryNode,
  type ConnectionState,
  type WAMessageUpdate,
  type WASocket
} from '@whiskeysockets/baileys'
import type { PlatformLogger as Logger } from './logger.js'
import type { Config } from '../config.js'
import {
  AlreadyConnected,
  BadRequest,
  NotConnected,
  PairingInProgress,
  PairingUnavailable,
  PhoneNotSet,
  SendFailed,
  SessionNotFound
} from '../errors.js'
import { backoffDelay, SerialQueue, withTimeout } from './async.js'
import type { SessionAuth } from './auth-state.js'
import type { TypedEmitter } from './emitter.js'
import { pnDigits, pnJid, type LidResolver } from './lid.js'
import { qrDataUrl } from './qr.js'
import { ReceiptBatcher } from './receipts.js'
import type { SessionRows } from './session-rows.js'
import { buildStatusMessage, relayInChunks, revokeMessage, STATUS_JID, withPushBackRetry, type RelayPolicy } from './status-sender.js'
import type {
  AuthMethod,
  ConnectionStatus,
  PlatformEventMap,
  SendStatusInput,
  SendStatusResult,
  SessionSnapshot,
  SessionSpec
} from './types.js'

export interface PlatformTiming {
  /** first reconnect delay after a drop; doubles per failed attempt */
  reconnectBaseMs: number
  reconnectMaxMs: number
  /** how long requestPairingCode waits for a socket that can accept a code request */
  pairingReadyTimeoutMs: number
  /** how long a send waits for the session to be open again between chunks */
  sendOpenWaitMs: number
  sendAttempts: number
  sendRetryBaseMs: number
  sendRetryMaxMs: number
  /** bound on connecting + logging out when a linked session is removed */
  logoutTimeoutMs: number
  /** bound on a socket's close handshake */
  socketEndTimeoutMs: number
}

export const DEFAULT_TIMING: PlatformTiming = {
  reconnectBaseMs: 1000,
  reconnectMaxMs: 60_000,
  pairingReadyTimeoutMs: 30_000,
  sendOpenWaitMs: 30_000,
  sendAttempts: 5,
  sendRetryBaseMs: 1000,
  sendRetryMaxMs: 15_000,
  logoutTimeoutMs: 10_000,
  socketEndTimeoutMs: 5000
}

export interface RuntimeDeps {
  wa: Config['wa']
  logger: Logger
  baileysLogger: Logger
  events: TypedEmitter<PlatformEventMap>
  rows: SessionRows
  timing: PlatformTiming
}

/** One socket's life: `ready` once the server sent pair-device (a pairing code can be asked for). */
interface Attempt {
  gen: number
  sock: WASocket
  ready: boolean
  codeRequested: boolean
  /** code requests on one socket go one at a time, so each confirmation is matched to its request */
  codeChain: Promise<unknown>
}

const SENT_CACHE_SIZE = 64

function disconnectCode (error: Error | undefined): number | undefined {
  const output = (error as { output?: { statusCode?: unknown } } | undefined)?.output
  return typeof output?.statusCode === 'number' ? output.statusCode : undefined
}

const messageOf = (err: unknown): string => err instanceof Error ? err.message : String(err)

/**
 * rc14's end() removes the ws 'close' listeners its pending queries wait on (lib/Socket/socket.js, end)
 * before closing, so each query then waits out its 60 s timeout, keeping timers (and the process) alive.
 * They also listen for 'error' on the same client: raising one after the close settles them at once.
 */
function releasePendingQueries (sock: WASocket): void {
  if (sock.ws.listenerCount('error') > 0) sock.ws.emit('error', new Error('connection closed'))
}

/**
 * One session: owns its Baileys socket (never two at once), linking, reconnects and sending.
 *
 * Lifecycle changes (connect, tear down, reconnect, logout, link timeout) run one at a time on
 * `lifecycle`; sends run one at a time on `sends` and pick up whatever socket is open at each chunk,
 * so a reconnect in the middle of a large send does not have to wait for it, nor fail it. Socket
 * events carry the Attempt they came from and are ignored once that attempt is no longer current.
 */
export class SessionRuntime {
  readonly id: string
  authMethod: AuthMethod
  phoneNumber: string | null
  status: ConnectionStatus = 'close'
  ownNumber: string | null = null
  pairingCode: string | null = null
  qrCode: string | null = null

  private readonly lifecycle = new SerialQueue()
  private readonly sends = new SerialQueue()
  private readonly log: Logger
  private readonly receipts: ReceiptBatcher
  private readonly waiters = new Set<() => void>()
  /** status messages we sent recently: served to retry receipts, and matched by bad acks */
  private readonly sent = new Map<string, proto.IMessage>()
  private attempt: Attempt | null = null
  /** the last socket's LID store (it reads our key store, so it still works after that socket closed) */
  private lidMapping: LidResolver | null = null
  private gen = 0
  /** no socket wanted: stopped, logged out, link timed out, replaced */
  private stopped = true
  /** removed or platform closed: every operation fails, no events */
  private gone = false
  private quiet = false
  private explicitPairing = false
  private reconnectAttempt = 0
  private reconnectTimer: NodeJS.Timeout | null = null
  private linkTimer: NodeJS.Timeout | null = null

  constructor (spec: SessionSpec, private readonly auth: SessionAuth, private readonly deps: RuntimeDeps) {
    this.id = spec.sessionId
    this.authMethod = spec.authMethod
    this.phoneNumber = spec.phoneNumber
    this.log = deps.logger.child({ sessionId: spec.sessionId })
    this.receipts = new ReceiptBatcher(
      (receipts) => { if (!this.gone) this.deps.events.emit('status-receipts', { sessionId: this.id, receipts }) },
      () => this.lidMapping,
      this.log
    )
  }

  // ---- public operations (called by the platform) ----

  async start (spec: SessionSpec): Promise<void> {
    await this.lifecycle.run(async () => {
      this.assertPresent()
      this.authMethod = spec.authMethod
      this.phoneNumber = spec.phoneNumber
      if (this.attempt !== null) return
      this.stopped = false
      await this.connect()
    })
  }

  async restart (): Promise<void> {
    await this.lifecycle.run(async () => {
      this.assertPresent()
      this.stopped = false
      this.reconnectAttempt = 0
      this.clearLinkTimer()
      await this.connect()
    })
  }

  async stop (): Promise<void> {
    await this.lifecycle.run(async () => {
      this.assertPresent()
      this.stopped = true
      this.clearTimers()
      await this.teardown()
      this.pairingCode = null
      this.qrCode = null
      this.setStatus('close', 'stopped')
    })
  }

  /** Logs the device out when linked (connecting briefly if needed), ends the socket, deletes auth rows. */
  async remove (): Promise<void> {
    await this.lifecycle.run(async () => {
      this.assertPresent()
      this.stopped = true
      this.quiet = true
      this.clearTimers()
      if (this.auth.isLinked()) await this.logoutDevice()
      this.gone = true
      this.notify()
      await this.teardown()
      this.auth.dispose()
    })
  }

  /** Platform shutdown: no reconnects, no events, sockets ended. */
  async shutdown (): Promise<void> {
    this.gone = true
    this.quiet = true
    this.stopped = true
    this.clearTimers()
    this.notify()
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
      const attempt = this.attempt
      // the current code was bound to the old number; push one for the new number
      if (this.authMethod === 'pairing' && !this.auth.isLinked() && attempt?.ready === true && !this.explicitPairing) {
        attempt.codeRequested = true
        this.issuePairingCode(attempt).catch(() => undefined)
      }
    })
  }

  async requestPairingCode (): Promise<string> {
    this.assertPresent()
    if (this.status === 'open') throw new AlreadyConnected()
    if (this.authMethod !== 'pairing' || this.phoneNumber === null) throw new PhoneNotSet()
    // linked but reconnecting: the platform would not accept a new link for this device
    if (this.auth.isLinked()) throw new PairingUnavailable()
    if (this.explicitPairing) throw new PairingInProgress()
    this.explicitPairing = true
    try {
      await this.lifecycle.run(async () => {
        this.assertPresent()
        if (this.attempt !== null) return
        this.stopped = false
        await this.connect()
      })
      // waited for outside the lifecycle queue: an expiring attempt must be able to reconnect meanwhile
      let attempt: Attempt
      try {
        attempt = await this.waitUntil(() => {
          this.assertPresent()
          if (this.status === 'open') throw new AlreadyConnected()
          if (this.stopped) throw new PairingUnavailable()
          return this.attempt?.ready === true ? this.attempt : undefined
        }, this.deps.timing.pairingReadyTimeoutMs, 'a socket that accepts a pairing code request')
      } catch (err) {
        if (err instanceof AlreadyConnected || err instanceof SessionNotFound) throw err
        this.emitPairingError(`Cannot generate pairing code at this time: ${messageOf(err)}`)
        throw new PairingUnavailable()
      }
      attempt.codeRequested = true
      try {
        return await this.issuePairingCode(attempt)
      } catch {
        throw new PairingUnavailable()
      }
    } finally {
      this.explicitPairing = false
    }
  }

  snapshot (): SessionSnapshot {
    const connected = this.status === 'open'
    return {
      sessionId: this.id,
      connected,
      status: this.status,
      ownNumber: connected ? this.ownNumber : null,
      pairingCode: connected || this.authMethod !== 'pairing' ? null : this.pairingCode,
      qrCode: connected || this.authMethod !== 'qrcode' ? null : this.qrCode
    }
  }

  newMessageId (): string {
    this.assertPresent()
    return generateMessageIDV2(this.attempt?.sock.user?.id ?? this.auth.state.creds.me?.id)
  }

  async sendStatus (input: SendStatusInput): Promise<SendStatusResult> {
    this.assertPresent()
    const invalid = input.recipients.find((digits) => !/^[0-9]{5,20}$/.test(digits))
    if (invalid !== undefined) throw new BadRequest(`recipient ${JSON.stringify(invalid)} is not a phone number (digits only)`)
    if (this.status !== 'open' || this.ownNumber === null) throw new NotConnected()
    return await this.sends.run(async () => {
      const policy = this.relayPolicy()
      const first = await this.openSocket()
      const own = this.ownNumber ?? pnDigits(first.user?.id)
      if (own === null) throw new NotConnected()
      const recipients = [...new Set(input.recipients)].filter((digits) => digits !== own)
      const jids = [pnJid(own), ...recipients.map(pnJid)]
      let message: proto.IMessage
      try {
        message = await withPushBackRetry({ policy, logger: this.log, what: 'status media upload' }, async (attempt) => {
          const sock = attempt === 0 ? first : await this.openSocket()
          return await buildStatusMessage(input.content, sock.waUploadToServer, this.log)
        })
      } catch (err) {
        throw new SendFailed(messageOf(err))
      }
      this.remember(input.messageId, message)
      try {
        await relayInChunks({
          socket: async () => await this.openSocket(),
          message,
          messageId: input.messageId,
          jids,
          policy,
          logger: this.log,
          ...(input.onProgress !== undefined ? { onProgress: input.onProgress } : {})
        })
      } catch (err) {
        if (err instanceof NotConnected) throw err
        throw new SendFailed(messageOf(err))
      }
      this.log.info({ messageId: input.messageId, recipients: jids.length, kind: input.content.kind }, 'status sent')
      return { messageId: input.messageId, recipientJids: jids }
    })
  }

  /** Revokes a status for the JIDs it went to; false when the platform could not be told. */
  async revokeStatus (messageId: string, recipientJids: string[]): Promise<boolean> {
    this.assertPresent()
    if (this.status !== 'open') return false
    return await this.sends.run(async () => {
      const jids = [...new Set(recipientJids.map((j) => jidNormalizedUser(j)))]
      if (jids.length === 0) return false
      const revokeId = this.newMessageId()
      const message = revokeMessage(messageId)
      this.remember(revokeId, message)
      try {
        // edit="7" marks a sender revoke, as Baileys' sendMessage({ delete }) does
        await relayInChunks({
          socket: async () => await this.openSocket(),
          message,
          messageId: revokeId,
          jids,
          policy: this.relayPolicy(),
          logger: this.log,
          additionalAttributes: { edit: '7' }
        })
        return true
      } catch (err) {
        this.log.warn({ err, messageId }, 'could not revoke status')
        return false
      }
    })
  }

  // ---- socket lifecycle (only ever called on the lifecycle queue) ----

  private async connect (): Promise<void> {
    this.clearReconnectTimer()
    await this.teardown()
    const linked = this.auth.isLinked()
    if (!linked) this.forgetHalfLink()
    const state = this.auth.state
    const { wa, baileysLogger } = this.deps
    const sock = makeWASocket({
      auth: state,
      waWebSocketUrl: wa.websocketUrl,
      ...(wa.version !== null ? { version: wa.version } : {}),
      logger: baileysLogger.child({ sessionId: this.id }),
      browser: Browsers.ubuntu('Chrome'),
      markOnlineOnConnect: false,
      syncFullHistory: false,
      shouldSyncHistoryMessage: () => false,
      generateHighQualityLinkPreview: false,
      getMessage: async (key) => key.id == null ? undefined : this.sent.get(key.id)
    })
    const attempt: Attempt = { gen: ++this.gen, sock, ready: false, codeRequested: false, codeChain: Promise.resolve() }
    this.attempt = attempt
    this.lidMapping = sock.signalRepository.lidMapping
    this.pairingCode = null
    this.qrCode = null

    sock.ev.on('creds.update', () => { this.auth.saveCreds(state.creds) })
    sock.ev.on('connection.update', (update) => { if (update.connection === 'close') setImmediate(() => { releasePendingQueries(sock) }) })
    sock.ev.on('connection.update', (update) => { this.onConnectionUpdate(attempt, update) })
    // receipts and rejections are facts even from a socket being replaced: not filtered by attempt
    sock.ev.on('message-receipt.update', (updates) => { if (!this.gone) this.receipts.onBaileysReceipts(updates) })
    sock.ev.on('messages.update', (updates) => { this.onMessagesUpdate(updates) })
    sock.ws.on('CB:receipt', (node: BinaryNode) => {
      if (!this.gone) this.receipts.onStanza(node, { id: state.creds.me?.id })
    })

    if (!linked) this.armLinkTimer()
    this.setStatus('connecting')
    this.notify()
  }

  /** Ends the current socket; its late events are ignored because it is no longer `this.attempt`. */
  private async teardown (): Promise<void> {
    const attempt = this.attempt
    if (attempt === null) return
    this.attempt = null
    this.gen++
    this.notify()
    await withTimeout(attempt.sock.end(undefined), this.deps.timing.socketEndTimeoutMs, 'socket close handshake timed out')
      .catch((err: unknown) => { this.log.debug({ err }, 'socket end') })
  }

  /** A pairing-code attempt sets creds.me before linking; left there, the next socket would try to log in. */
  private forgetHalfLink (): void {
    const creds = this.auth.state.creds
    if (creds.me === undefined && creds.pairingCode === undefined) return
    delete creds.me
    creds.pairingCode = undefined
    this.auth.saveCreds(creds)
  }

  private onConnectionUpdate (attempt: Attempt, update: Partial<ConnectionState>): void {
    if (attempt !== this.attempt) return
    if (update.qr !== undefined) this.onQr(attempt, update.qr)
    if (update.isNewLogin === true) this.clearLinkTimer()
    if (update.connection === 'open') this.onOpen(attempt)
    else if (update.connection === 'close') this.onClose(attempt, update.lastDisconnect?.error)
  }

  private onQr (attempt: Attempt, qr: string): void {
    attempt.ready = true
    this.notify()
    if (this.auth.isLinked() || this.stopped) return
    if (this.authMethod === 'qrcode') {
      void this.publishQr(attempt, qr)
    } else if (!attempt.codeRequested && !this.explicitPairing && this.phoneNumber !== null) {
      attempt.codeRequested = true
      this.issuePairingCode(attempt).catch(() => undefined)
    }
  }

  private async publishQr (attempt: Attempt, qr: string): Promise<void> {
    try {
      const url = await qrDataUrl(qr)
      if (attempt !== this.attempt || this.status === 'open') return
      this.qrCode = url
      this.emit('qr-code', { sessionId: this.id, qrCode: url })
    } catch (err) {
      this.emit('qr-code-error', { sessionId: this.id, error: `Could not render the QR code: ${messageOf(err)}` })
    }
  }

  /** Asks for a code on this socket; it counts once the server confirmed the request (`link_code_pairing_ref`). */
  private async issuePairingCode (attempt: Attempt): Promise<string> {
    const run = async (): Promise<string> => {
      const phone = this.phoneNumber
      if (phone === null) throw new PhoneNotSet()
      const confirmed = this.confirmation(attempt.sock)
      try {
        // Baileys resolves once companion_hello is written; the code is only usable after the server
        // registered it, and entering it earlier would race the request
        const code = await attempt.sock.requestPairingCode(phone)
        await confirmed.promise
        if (attempt !== this.attempt) throw new Error('the link attempt ended before the code was issued')
        this.pairingCode = code
        this.emit('pairing-code', { sessionId: this.id, pairingCode: code, phoneNumber: phone })
        return code
      } catch (err) {
        if (attempt === this.attempt) this.emitPairingError(`Cannot generate pairing code at this time: ${messageOf(err)}`)
        throw err
      } finally {
        confirmed.cancel()
      }
    }
    const result = attempt.codeChain.then(run, run)
    attempt.codeChain = result.catch(() => undefined)
    return await result
  }

  /** The server's answer to companion_hello, an iq result holding `link_code_companion_reg`. */
  private confirmation (sock: WASocket): { promise: Promise<void>, cancel: () => void } {
    const event = 'CB:iq,type:result,link_code_companion_reg'
    let onResult = (): void => undefined
    let onUpdate = (_u: Partial<ConnectionState>): void => undefined
    const answered = new Promise<void>((resolve, reject) => {
      onResult = () => { resolve() }
      onUpdate = (u) => { if (u.connection === 'close') reject(new Error('the connection closed before the platform confirmed the code')) }
      sock.ws.on(event, onResult)
      sock.ev.on('connection.update', onUpdate)
    })
    const cancel = (): void => {
      sock.ws.off(event, onResult)
      sock.ev.off('connection.update', onUpdate)
    }
    const promise = withTimeout(answered, this.deps.timing.pairingReadyTimeoutMs, 'the platform did not confirm the pairing code request')
    promise.catch(() => undefined)
    return { promise, cancel }
  }

  private onOpen (attempt: Attempt): void {
    this.clearLinkTimer()
    this.reconnectAttempt = 0
    const me = attempt.sock.user
    this.ownNumber = pnDigits(me?.id)
    const ownLid = me?.lid === undefined ? null : jidNormalizedUser(me.lid)
    this.pairingCode = null
    this.qrCode = null
    try {
      this.deps.rows.markLinked(this.id, this.ownNumber, ownLid)
    } catch (err) {
      this.log.error({ err }, 'could not store the linked account')
    }
    this.log.info({ ownNumber: this.ownNumber }, 'connected')
    this.setStatus('open')
  }

  private onClose (attempt: Attempt, error: Error | undefined): void {
    this.attempt = null
    if (this.status === 'open') this.setStatus('close', error?.message ?? 'closed')
    this.notify()
    this.lifecycle.run(async () => { await this.afterClose(attempt, error) })
      .catch((err: unknown) => { this.log.error({ err }, 'reconnect failed') })
  }

  private async afterClose (attempt: Attempt, error: Error | undefined): Promise<void> {
    if (attempt.gen !== this.gen || this.attempt !== null) return // a newer socket took over
    if (this.gone || this.stopped) return
    const code = disconnectCode(error)
    const reason = error?.message ?? 'closed'
    const linked = this.auth.isLinked()
    if (code === DisconnectReason.loggedOut) {
      await this.onLoggedOut()
    } else if (code === DisconnectReason.restartRequired) {
      // sent right after pair-success (and on server restarts): same auth state, new socket, no delay
      this.log.info('platform asked for a restart; reconnecting')
      await this.connect()
    } else if (code === DisconnectReason.connectionReplaced) {
      this.stopped = true
      this.log.error('another client replaced this connection; not reconnecting')
      this.setStatus('close', 'replaced by another connection')
    } else if (!linked && attempt.ready) {
      // the link window of this socket ran out: Baileys ends it with 408 when its QR refs are used up,
      // the server by closing it. The server was healthy (it sent pair-device), so no backoff: a fresh
      // attempt gives a new QR and a new pairing code at once, until the link timeout stops it.
      this.log.info({ code, reason }, 'link attempt expired; starting a fresh one')
      await this.connect()
    } else {
      this.setStatus('close', reason)
      this.scheduleReconnect(reason, code)
    }
  }

  private scheduleReconnect (reason: string, code: number | undefined): void {
    const { reconnectBaseMs, reconnectMaxMs } = this.deps.timing
    const delayMs = backoffDelay(this.reconnectAttempt++, reconnectBaseMs, reconnectMaxMs)
    this.log.warn({ delayMs, attempt: this.reconnectAttempt, code, reason }, `connection lost; reconnecting in ${delayMs} ms`)
    this.clearReconnectTimer()
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null
      this.lifecycle.run(async () => {
        if (!this.stopped && !this.gone && this.attempt === null) await this.connect()
      }).catch((err: unknown) => { this.log.error({ err }, 'reconnect failed') })
    }, delayMs)
  }

  private async onLoggedOut (): Promise<void> {
    this.stopped = true
    this.clearTimers()
    await this.teardown()
    this.auth.reset()
    try {
      this.deps.rows.markUnlinked(this.id)
    } catch (err) {
      this.log.error({ err }, 'could not mark the session unlinked')
    }
    this.ownNumber = null
    this.pairingCode = null
    this.qrCode = null
    this.log.warn('logged out by the platform; auth state cleared, the session can be linked again')
    this.setStatus('logged-out', 'logged out')
  }

  private armLinkTimer (): void {
    if (this.linkTimer !== null) return
    const ms = this.deps.wa.linkTimeoutMs
    this.linkTimer = setTimeout(() => {
      this.linkTimer = null
      this.lifecycle.run(async () => { await this.expireLink(ms) })
        .catch((err: unknown) => { this.log.error({ err }, 'link timeout handling failed') })
    }, ms)
  }

  private async expireLink (ms: number): Promise<void> {
    if (this.gone || this.stopped || this.status === 'open' || this.auth.isLinked()) return
    this.stopped = true
    this.clearReconnectTimer()
    await this.teardown()
    this.pairingCode = null
    this.qrCode = null
    const seconds = Math.round(ms / 1000)
    this.log.info({ seconds }, 'linking timed out; no more codes until restarted')
    this.setStatus('close', 'link-timeout')
    if (this.authMethod === 'qrcode') {
      this.emit('qr-code-error', { sessionId: this.id, error: `Linking timed out after ${seconds} s without a scan; restart the session to get a new QR code` })
    } else {
      this.emitPairingError(`Linking timed out after ${seconds} s without the code being entered; request a new pairing code or restart the session`)
    }
  }

  private async logoutDevice (): Promise<void> {
    const { logoutTimeoutMs } = this.deps.timing
    try {
      let sock = this.status === 'open' ? this.attempt?.sock : undefined
      if (sock === undefined) {
        await this.connect()
        sock = await this.waitUntil(() => {
          if (this.attempt === null) throw new Error('connection closed')
          return this.status === 'open' ? this.attempt.sock : undefined
        }, logoutTimeoutMs, 'an open connection to log out')
      }
      await withTimeout(sock.logout(), logoutTimeoutMs, 'logout timed out')
      this.log.info('device logged out')
    } catch (err) {
      this.log.warn({ err }, 'could not log the device out; removing its auth state anyway')
    }
  }

  // ---- helpers ----

  private onMessagesUpdate (updates: WAMessageUpdate[]): void {
    if (this.gone) return
    for (const { key, update } of updates) {
      if (update.status !== proto.WebMessageInfo.Status.ERROR || key.fromMe !== true || key.id == null) continue
      if (key.remoteJid !== STATUS_JID && !this.sent.has(key.id)) continue
      const error = update.messageStubParameters?.[0] ?? 'unknown error'
      this.log.warn({ messageId: key.id, error }, 'platform rejected a status')
      this.emit('status-error', { sessionId: this.id, messageId: key.id, error })
    }
  }

  private relayPolicy (): RelayPolicy {
    const t = this.deps.timing
    return { chunkSize: this.deps.wa.statusChunkSize, attempts: t.sendAttempts, retryBaseMs: t.sendRetryBaseMs, retryMaxMs: t.sendRetryMaxMs }
  }

  private async openSocket (): Promise<WASocket> {
    return await this.waitUntil(() => {
      if (this.gone || this.stopped) throw new NotConnected()
      return this.status === 'open' ? this.attempt?.sock : undefined
    }, this.deps.timing.sendOpenWaitMs, 'the session to be connected').catch((err: unknown) => {
      throw err instanceof NotConnected ? err : new NotConnected()
    })
  }

  private remember (id: string, message: proto.IMessage): void {
    this.sent.set(id, message)
    if (this.sent.size > SENT_CACHE_SIZE) {
      const oldest = this.sent.keys().next().value
      if (oldest !== undefined) this.sent.delete(oldest)
    }
  }

  private setStatus (status: ConnectionStatus, reason?: string): void {
    if (status === this.status && status !== 'logged-out') return
    this.status = status
    this.notify()
    const connected = status === 'open'
    this.emit('connection-status', {
      sessionId: this.id,
      connected,
      status,
      ownNumber: connected ? this.ownNumber : null,
      ...(reason !== undefined ? { reason } : {})
    })
  }

  private emit<K extends keyof PlatformEventMap & string> (event: K, payload: PlatformEventMap[K]): void {
    if (!this.quiet && !this.gone) this.deps.events.emit(event, payload)
  }

  private emitPairingError (error: string): void {
    this.emit('pairing-code-error', { sessionId: this.id, error })
  }

  private assertPresent (): void {
    if (this.gone) throw new SessionNotFound()
  }

  private notify (): void {
    for (const check of [...this.waiters]) check()
  }

  /** Resolves with `probe()`'s first defined value, re-checked on every state change; probe may throw to abort. */
  private async waitUntil<T> (probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return await new Promise<T>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer)
        this.waiters.delete(check)
      }
      const check = (): void => {
        try {
          const value = probe()
          if (value === undefined) return
          done()
          resolve(value)
        } catch (err) {
          done()
          reject(err)
        }
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`))
      }, timeoutMs)
      this.waiters.add(check)
      check()
    })
  }

  private clearReconnectTimer (): void {
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer)
    this.reconnectTimer = null
  }

  private clearLinkTimer (): void {
    if (this.linkTimer !== null) clearTimeout(this.linkTimer)
    this.linkTimer = null
  }

  private clearTimers (): void {
    this.clearReconnectTimer()
    this.clearLinkTimer()
  }
}
