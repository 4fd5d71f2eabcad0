import makeWASocket, {
  Browsers,
  DisconnectReason,
  type AuthenticationState,
  type proto,
  type WASocket
} from '@whiskeysockets/baileys'
import type { Config } from '../../config.js'
import { backoffDelay, withTimeout } from '../async.js'
import type { PlatformLogger as Logger } from '../logger.js'

/** One socket's life: `ready` once the server sent pair-device (a pairing code can be asked for). */
export interface Attempt {
  gen: number
  sock: WASocket
  ready: boolean
  open: boolean
  codeRequested: boolean
  /** code requests on one socket go one at a time, so each confirmation is matched to its request */
  codeChain: Promise<unknown>
}

export interface SocketOptions {
  auth: AuthenticationState
  wa: Config['wa']
  logger: Logger
  /** a message we sent, for the platform's retry requests */
  getMessage: (id: string) => proto.IMessage | undefined
}

export function createSocket ({ auth, wa, logger, getMessage }: SocketOptions): WASocket {
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
    getMessage: async (key) => key.id == null ? undefined : getMessage(key.id)
  })
  sock.ev.on('connection.update', (update) => { if (update.connection === 'close') setImmediate(() => { releasePendingQueries(sock) }) })
  return sock
}

/**
 * rc14's end() removes the ws 'close' listeners its pending queries wait on (lib/Socket/socket.js, end)
 * before closing, so each query then waits out its 60 s timeout, keeping timers (and the process) alive.
 * They also listen for 'error' on the same client: raising one after the close settles them at once.
 */
function releasePendingQueries (sock: WASocket): void {
  if (sock.ws.listenerCount('error') > 0) sock.ws.emit('error', new Error('connection closed'))
}

export async function endSocket (sock: WASocket, timeoutMs: number, log: Logger): Promise<void> {
  await withTimeout(sock.end(undefined), timeoutMs, 'socket close handshake timed out')
    .catch((err: unknown) => { log.debug({ err }, 'socket end') })
}

/** What a session does after its socket closed. */
export type AfterClose = 'logged-out' | 'restart' | 'replaced' | 'link-expired' | 'back-off'

export function afterClose (error: Error | undefined, linked: boolean, attemptWasReady: boolean): { next: AfterClose, code: number | undefined, reason: string } {
  const output = (error as { output?: { statusCode?: unknown } } | undefined)?.output
  const code = typeof output?.statusCode === 'number' ? output.statusCode : undefined
  const reason = error?.message ?? 'closed'
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

  constructor (private readonly baseMs: number, private readonly maxMs: number) {}

  schedule (log: Logger, why: { reason: string, code: number | undefined }, run: () => void): void {
    const delayMs = backoffDelay(this.#attempt++, this.baseMs, this.maxMs)
    log.warn({ delayMs, attempt: this.#attempt, code: why.code, reason: why.reason }, `connection lost; reconnecting in ${delayMs} ms`)
    this.cancel()
    this.#timer = setTimeout(() => {
      this.#timer = null
      run()
    }, delayMs)
  }

  reset (): void {
    this.#attempt = 0
  }

  cancel (): void {
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
  }
}
