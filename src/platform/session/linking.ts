import type { ConnectionState, WASocket } from '@whiskeysockets/baileys'
import { withTimeout } from '../async.js'
import { onStanza } from '../baileys/index.js'
import type { SessionAuth } from '../auth-state.js'
import { isPlatformError, PlatformError } from '../errors.js'
import type { AuthMethod, PlatformEventMap } from '../types.js'
import type { Attempt } from './attempt.js'

export type Emit = <K extends keyof PlatformEventMap & string>(event: K, payload: PlatformEventMap[K]) => void

/** What linking needs to know of its session. */
export interface LinkingHost {
  readonly id: string
  authMethod: () => AuthMethod
  phoneNumber: () => string | null
  /** the socket in use, null between sockets */
  current: () => Attempt | null
  isOpen: () => boolean
  emit: Emit
}

export const messageOf = (err: unknown): string => err instanceof Error ? err.message : String(err)

/** The platform's QR string as a PNG data URL, large enough for a phone camera off a screen. */
async function qrDataUrl (qr: string): Promise<string> {
  // loaded on the first QR, not at start: a node whose sessions are all linked never draws one
  const { default: QRCode } = await import('qrcode')
  return await QRCode.toDataURL(qr, { errorCorrectionLevel: 'M', margin: 2, scale: 6 })
}

/** A pairing-code attempt sets creds.me before linking; left there, the next socket would try to log in. */
export function forgetHalfLink (auth: SessionAuth): void {
  const creds = auth.state.creds
  if (creds.me === undefined && creds.pairingCode === undefined) return
  delete creds.me
  creds.pairingCode = undefined
  void auth.saveCreds(creds)
}

/** Linking an unlinked session: QR codes, pairing codes and the timer that ends a link window nobody uses. */
export class Linking {
  pairingCode: string | null = null
  qrCode: string | null = null
  /** an explicit requestPairingCode is running; automatic codes wait for it */
  requested = false
  #timer: NodeJS.Timeout | null = null

  constructor (private readonly host: LinkingHost, private readonly confirmTimeoutMs: number) {}

  clearCodes (): void {
    this.pairingCode = null
    this.qrCode = null
  }

  /**
   * An explicit code request: at most one at a time. `ensureSocket` starts a link attempt if none runs;
   * `ready` waits for a socket that accepts a code request. `open` and `linked` describe the session now.
   */
  async request (steps: { open: boolean, linked: boolean, ensureSocket: () => Promise<void>, ready: () => Promise<Attempt> }): Promise<string> {
    if (steps.open) throw new PlatformError('ALREADY_CONNECTED')
    if (this.host.authMethod() !== 'pairing' || this.host.phoneNumber() === null) throw new PlatformError('PHONE_NOT_SET')
    // linked but reconnecting: the platform would not accept a new link for this device
    if (steps.linked) throw new PlatformError('PAIRING_UNAVAILABLE')
    if (this.requested) throw new PlatformError('PAIRING_IN_PROGRESS')
    this.requested = true
    try {
      await steps.ensureSocket()
      let attempt: Attempt
      try {
        attempt = await steps.ready()
      } catch (err) {
        if (isPlatformError(err, 'ALREADY_CONNECTED') || isPlatformError(err, 'SESSION_NOT_FOUND')) throw err
        this.emitPairingError(`Cannot generate pairing code at this time: ${messageOf(err)}`)
        throw new PlatformError('PAIRING_UNAVAILABLE')
      }
      attempt.codeRequested = true
      try {
        return await this.issuePairingCode(attempt)
      } catch {
        throw new PlatformError('PAIRING_UNAVAILABLE')
      }
    } finally {
      this.requested = false
    }
  }

  /** A socket that can link sent a QR ref: publish the QR, or ask for a pairing code once per socket. */
  onQr (attempt: Attempt, qr: string): void {
    if (this.host.authMethod() === 'qrcode') {
      void this.publishQr(attempt, qr)
    } else if (!attempt.codeRequested && !this.requested && this.host.phoneNumber() !== null) {
      this.pushCode(attempt)
    }
  }

  /** The current code was bound to the old number: push one for the new number. */
  onPhoneNumberChanged (attempt: Attempt | null): void {
    if (this.host.authMethod() === 'pairing' && attempt?.ready === true && !this.requested) this.pushCode(attempt)
  }

  pushCode (attempt: Attempt): void {
    attempt.codeRequested = true
    this.issuePairingCode(attempt).catch(() => undefined)
  }

  private async publishQr (attempt: Attempt, qr: string): Promise<void> {
    try {
      const url = await qrDataUrl(qr)
      if (attempt !== this.host.current() || this.host.isOpen()) return
      this.qrCode = url
      this.host.emit('qr-code', { sessionId: this.host.id, qrCode: url })
    } catch (err) {
      this.host.emit('qr-code-error', { sessionId: this.host.id, error: `Could not render the QR code: ${messageOf(err)}` })
    }
  }

  /** Asks for a code on this socket; it counts once the server confirmed the request (`link_code_pairing_ref`). */
  async issuePairingCode (attempt: Attempt): Promise<string> {
    const run = async (): Promise<string> => {
      const phone = this.host.phoneNumber()
      if (phone === null) throw new PlatformError('PHONE_NOT_SET')
      const confirmed = this.confirmation(attempt.sock)
      try {
        // Baileys resolves once companion_hello is written; the code is only usable after the server
        // registered it, and entering it earlier would race the request
        const code = await attempt.sock.requestPairingCode(phone)
        await confirmed.promise
        if (attempt !== this.host.current()) throw new Error('the link attempt ended before the code was issued')
        this.pairingCode = code
        this.host.emit('pairing-code', { sessionId: this.host.id, pairingCode: code, phoneNumber: phone })
        return code
      } catch (err) {
        if (attempt === this.host.current()) this.emitPairingError(`Cannot generate pairing code at this time: ${messageOf(err)}`)
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
    let onResult = (): void => undefined
    let stopListening = (): void => undefined
    let onUpdate = (_u: Partial<ConnectionState>): void => undefined
    const answered = new Promise<void>((resolve, reject) => {
      onResult = () => { resolve() }
      onUpdate = (u) => { if (u.connection === 'close') reject(new Error('the connection closed before the platform confirmed the code')) }
      stopListening = onStanza(sock, 'iq,type:result,link_code_companion_reg', onResult)
      sock.ev.on('connection.update', onUpdate)
    })
    const cancel = (): void => {
      stopListening()
      sock.ev.off('connection.update', onUpdate)
    }
    const promise = withTimeout(answered, this.confirmTimeoutMs, 'the platform did not confirm the pairing code request')
    promise.catch(() => undefined)
    return { promise, cancel }
  }

  emitPairingError (error: string): void {
    this.host.emit('pairing-code-error', { sessionId: this.host.id, error })
  }

  /** Starts the link window once per linking run; `onExpire` runs when nobody linked within `ms`. */
  armTimer (ms: number, onExpire: () => void): void {
    if (this.#timer !== null) return
    this.#timer = setTimeout(() => {
      this.#timer = null
      onExpire()
    }, ms)
  }

  clearTimer (): void {
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
  }

  /** Tells clients the link window closed and how to open a new one. */
  announceTimeout (seconds: number): void {
    if (this.host.authMethod() === 'qrcode') {
      this.host.emit('qr-code-error', { sessionId: this.host.id, error: `Linking timed out after ${seconds} s without a scan; restart the session to get a new QR code` })
    } else {
      this.emitPairingError(`Linking timed out after ${seconds} s without the code being entered; request a new pairing code or restart the session`)
    }
  }
}
