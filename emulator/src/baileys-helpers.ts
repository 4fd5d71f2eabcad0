/**
 * Helpers for driving a bare Baileys socket against the emulator (reusable by service tests):
 * an in-memory auth state, test socket options, and a connect loop that follows the 515 restart
 * the server requests after linking.
 */
import {
  DisconnectReason,
  generateWAMessage,
  makeWASocket,
  UPLOAD_TIMEOUT,
  WA_CERT_DETAILS,
  type AnyMessageContent,
  type AuthenticationState,
  type BaileysEventMap,
  type BinaryNode,
  type UserFacingSocketConfig,
  type WASocket
} from '@whiskeysockets/baileys'
import { pino } from 'pino'
import { makeMemoryAuthState, type MemoryAuthState } from './memory-auth.js'

export { makeMemoryAuthState, type MemoryAuthState }

/** Pin the emulator's root key in this process (Baileys verifies the Noise certificate chain with it). */
export function trustEmulatorRoot (rootPublicKeyBase64: string): void {
  const root = Buffer.from(rootPublicKeyBase64, 'base64')
  if (root.length !== WA_CERT_DETAILS.PUBLIC_KEY.length) {
    throw new Error(`root public key must be ${WA_CERT_DETAILS.PUBLIC_KEY.length} bytes`)
  }
  WA_CERT_DETAILS.PUBLIC_KEY.set(root)
}

const silent = pino({ level: process.env.BAILEYS_LOG_LEVEL ?? 'silent' })

/** Options that keep a test socket local, quiet and quick. */
export function testSocketConfig (
  wsUrl: string,
  auth: AuthenticationState,
  overrides: Partial<UserFacingSocketConfig> = {}
): UserFacingSocketConfig {
  return {
    waWebSocketUrl: wsUrl,
    auth,
    logger: silent,
    markOnlineOnConnect: false,
    shouldSyncHistoryMessage: () => false,
    syncFullHistory: false,
    generateHighQualityLinkPreview: false,
    connectTimeoutMs: 5_000,
    defaultQueryTimeoutMs: 5_000,
    ...overrides
  }
}

export interface CloseInfo {
  statusCode?: number
  message?: string
}

/** Status code Baileys attached to a close (a Boom error's output.statusCode). */
export function closeStatusCode (error: unknown): number | undefined {
  const output = (error as { output?: { statusCode?: number } } | undefined)?.output
  return output?.statusCode
}

/** Resolve with the next connection close of `sock`. */
export function waitForClose (sock: WASocket, timeoutMs = 10_000): Promise<CloseInfo> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sock.ev.off('connection.update', listener)
      reject(new Error(`socket did not close within ${timeoutMs} ms`))
    }, timeoutMs)
    const listener = (update: BaileysEventMap['connection.update']) => {
      if (update.connection !== 'close') return
      clearTimeout(timer)
      sock.ev.off('connection.update', listener)
      const error = update.lastDisconnect?.error
      resolve({ statusCode: closeStatusCode(error), message: error?.message })
    }
    sock.ev.on('connection.update', listener)
  })
}

/** Resolve with the first `event` payload matching `predicate`. */
export function waitForEvent<E extends keyof BaileysEventMap> (
  sock: WASocket,
  event: E,
  predicate: (payload: BaileysEventMap[E]) => boolean = () => true,
  timeoutMs = 10_000
): Promise<BaileysEventMap[E]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sock.ev.off(event, listener)
      reject(new Error(`no matching ${event} within ${timeoutMs} ms`))
    }, timeoutMs)
    const listener = (payload: BaileysEventMap[E]) => {
      if (!predicate(payload)) return
      clearTimeout(timer)
      sock.ev.off(event, listener)
      resolve(payload)
    }
    sock.ev.on(event, listener)
  })
}

export interface MessageError {
  /** where Baileys reported it: its own pending 'append' upsert absorbs updates while events are buffered */
  event: 'messages.update' | 'messages.upsert'
  stubParameters: string[]
}

/**
 * Resolve when Baileys marks our message `id` as failed (status ERROR), e.g. after a server ack
 * with an `error` attribute. Baileys emits that as messages.update, but when the ack comes in
 * while the message's own upsert is still in the event buffer (the usual case: the ack follows
 * within ~100 ms) it is merged into that messages.upsert instead, so both are watched.
 */
export function waitForMessageError (sock: WASocket, id: () => string, timeoutMs = 10_000): Promise<MessageError> {
  const ERROR = 0 // proto.WebMessageInfo.Status.ERROR
  return new Promise((resolve, reject) => {
    const finish = (result?: MessageError) => {
      clearTimeout(timer)
      sock.ev.off('messages.update', onUpdate)
      sock.ev.off('messages.upsert', onUpsert)
      if (result) resolve(result)
      else reject(new Error(`message ${id()} was not marked as failed within ${timeoutMs} ms`))
    }
    const onUpdate = (updates: BaileysEventMap['messages.update']) => {
      const hit = updates.find((u) => u.key.id === id() && u.update.status === ERROR)
      if (hit) finish({ event: 'messages.update', stubParameters: hit.update.messageStubParameters ?? [] })
    }
    const onUpsert = ({ messages }: BaileysEventMap['messages.upsert']) => {
      const hit = messages.find((m) => m.key.id === id() && m.status === ERROR)
      if (hit) finish({ event: 'messages.upsert', stubParameters: hit.messageStubParameters ?? [] })
    }
    const timer = setTimeout(() => finish(), timeoutMs)
    sock.ev.on('messages.update', onUpdate)
    sock.ev.on('messages.upsert', onUpsert)
  })
}

/**
 * The next `<ack class="message" id=…>` the server sends for message `id` (with `error` when it was
 * NACKed): listens on the raw stanza (Baileys' `CB:ack,class:message`), so it works whatever Baileys
 * makes of the ack. Start waiting before sending.
 */
export function waitForMessageAck (
  sock: WASocket, id: () => string, timeoutMs = 10_000
): Promise<{ id: string, error?: string, attrs: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const onAck = (node: BinaryNode) => {
      if (node.attrs.id !== id()) return
      clearTimeout(timer)
      sock.ws.off('CB:ack,class:message', onAck)
      resolve({ id: node.attrs.id, error: node.attrs.error, attrs: { ...node.attrs } })
    }
    const timer = setTimeout(() => {
      sock.ws.off('CB:ack,class:message', onAck)
      reject(new Error(`no ack for message ${id()} within ${timeoutMs} ms`))
    }, timeoutMs)
    sock.ws.on('CB:ack,class:message', onAck)
  })
}

export interface RelayStatusOptions {
  /** the audience, as Baileys' `statusJidList` (LID jids for a LID-migrated account, numbers for a legacy one) */
  statusJidList: string[]
  /** `<meta status_setting=…>` to add (default `contacts`); null: no `<meta>` */
  statusSetting?: string | null
  messageId?: string
  /** extra `<message>` attributes (e.g. `addressing_mode`, to break a rule on purpose) */
  additionalAttributes?: Record<string, string>
  /** text statuses: background colour (`#rrggbb`) and font, as `sendMessage` takes them */
  backgroundColor?: string
  font?: number
}

/**
 * Post to status@broadcast through Baileys' own `relayMessage` (rc14's stanza builder: device-level
 * `<to>` entries with an SKDM each, one skmsg) with a `<meta status_setting>` and the audience given
 * as is: with LID jids that is the LID-addressed post the emulator accepts from a migrated account.
 * Unlike `sendMessage` it emits no own `messages.upsert`, and a revoke (`{ delete: key }`) goes out
 * without rc14's `edit="7"`, as WA Web sends it. Resolves with the message id once the stanza is sent.
 */
export async function relayStatus (sock: WASocket, content: AnyMessageContent, options: RelayStatusOptions): Promise<string> {
  const message = await generateWAMessage('status@broadcast', content, {
    userJid: sock.user!.id,
    upload: sock.waUploadToServer,
    messageId: options.messageId,
    backgroundColor: options.backgroundColor,
    font: options.font
  })
  const setting = options.statusSetting === undefined ? 'contacts' : options.statusSetting
  await sock.relayMessage('status@broadcast', message.message!, {
    messageId: message.key.id!,
    statusJidList: options.statusJidList,
    additionalAttributes: options.additionalAttributes,
    additionalNodes: setting === null ? [] : [{ tag: 'meta', attrs: { status_setting: setting } }]
  })
  return message.key.id!
}

export interface ConnectOptions {
  wsUrl: string
  auth: AuthenticationState
  config?: Partial<UserFacingSocketConfig>
  /** called for every QR Baileys shows (the socket that shows it is passed along) */
  onQr?: (qr: string, sock: WASocket) => void
  /** called for every socket created, before it connects */
  onSocket?: (sock: WASocket) => void
  maxAttempts?: number
  timeoutMs?: number
}

export class ConnectError extends Error {
  constructor (
    message: string,
    readonly statusCode?: number
  ) {
    super(message)
  }
}

/**
 * Open sockets with the same auth state until one reaches `open`, reconnecting after
 * `restartRequired` (515, sent after linking) like a real app. Any other close rejects.
 */
export async function connectUntilOpen (options: ConnectOptions): Promise<WASocket> {
  const { maxAttempts = 4, timeoutMs = 20_000 } = options
  const deadline = Date.now() + timeoutMs
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const sock = makeWASocket(testSocketConfig(options.wsUrl, options.auth, options.config))
    options.onSocket?.(sock)
    const outcome = await new Promise<{ open: true } | ({ open: false } & CloseInfo)>((resolve) => {
      const timer = setTimeout(
        () => resolve({ open: false, message: 'timed out waiting for open' }),
        Math.max(1, deadline - Date.now())
      )
      sock.ev.on('connection.update', (update) => {
        if (update.qr) options.onQr?.(update.qr, sock)
        if (update.connection === 'open') {
          clearTimeout(timer)
          resolve({ open: true })
        } else if (update.connection === 'close') {
          clearTimeout(timer)
          const error = update.lastDisconnect?.error
          resolve({ open: false, statusCode: closeStatusCode(error), message: error?.message })
        }
      })
    })
    if (outcome.open) {
      await pingRoundTrip(sock)
      return sock
    }
    if (outcome.statusCode !== DisconnectReason.restartRequired) {
      await endSocket(sock)
      throw new ConnectError(`connection closed: ${outcome.message ?? 'unknown'} (${outcome.statusCode ?? '-'})`, outcome.statusCode)
    }
  }
  throw new ConnectError(`no open connection after ${maxAttempts} attempts`)
}

/**
 * Ping the server and wait for the answer. The server answers in order, so afterwards every
 * query the client sent before has been answered (e.g. the init queries Baileys fires on open),
 * and a fault injected next does not strand them.
 */
export async function pingRoundTrip (sock: WASocket, timeoutMs = 3_000): Promise<void> {
  if (!sock.ws.isOpen) return
  await sock
    .query({ tag: 'iq', attrs: { to: 's.whatsapp.net', type: 'get', xmlns: 'w:p' }, content: [{ tag: 'ping', attrs: {} }] }, timeoutMs)
    .catch(() => undefined)
}

/**
 * End a socket and wait (bounded) for it to finish closing, after a ping round trip: queries still
 * in flight when a socket ends are never rejected by Baileys (end() drops the ws listeners) and
 * keep their defaultQueryTimeoutMs timers alive, holding the process open.
 */
export async function endSocket (sock: WASocket | undefined, timeoutMs = 3_000): Promise<void> {
  if (!sock) return
  await pingRoundTrip(sock, timeoutMs)
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    sock.end(undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs)
    })
  ]).catch(() => undefined)
  clearTimeout(timer)
}

let uploadTimerPatched = false

/**
 * Baileys rc14 races every prekey upload against a 30 s `setTimeout` it never clears, so a process
 * that linked a device stays alive for 30 s after its last upload. This makes that one timer
 * unref'd (it still fires if the process is alive), so a test process can exit when it is done.
 */
export function unrefBaileysUploadTimer (): void {
  if (uploadTimerPatched) return
  uploadTimerPatched = true
  const original = globalThis.setTimeout
  const patched = function (this: unknown, handler: (...args: unknown[]) => void, timeout?: number, ...args: unknown[]) {
    const timer = original(handler, timeout, ...args)
    if (timeout === UPLOAD_TIMEOUT && new Error().stack?.includes('uploadPreKeys')) timer.unref()
    return timer
  }
  globalThis.setTimeout = Object.assign(patched, original) as unknown as typeof setTimeout
}

/** What the link helpers need from an emulator (the library `Emulator` satisfies it). */
export interface LinkingEmulator {
  readonly wsUrl: string
  scan(number: string, qr: string): Promise<unknown>
  enterCode(number: string, code: string): Promise<unknown>
}

/**
 * Link a fresh in-memory auth state to `number` by having the emulated phone scan the first QR
 * (`qrToScan` may turn it into what the phone sees, e.g. a PNG data URL), then return the open socket.
 */
export async function linkWithQr (
  emulator: LinkingEmulator,
  number: string,
  options: { auth?: AuthenticationState, config?: Partial<UserFacingSocketConfig>, qrToScan?: (qr: string) => Promise<string> | string } = {}
): Promise<{ sock: WASocket, auth: AuthenticationState }> {
  const auth = options.auth ?? makeMemoryAuthState()
  let scan: Promise<unknown> | undefined
  const sock = await connectUntilOpen({
    wsUrl: emulator.wsUrl,
    auth,
    config: options.config,
    onQr: (qr) => {
      scan ??= Promise.resolve(options.qrToScan ? options.qrToScan(qr) : qr).then((shown) => emulator.scan(number, shown))
      // surfaced through connectUntilOpen timing out; keep the rejection handled
      scan.catch(() => undefined)
    }
  })
  await scan
  return { sock, auth }
}

/** Link by pairing code: request a code on the first QR, type it on the emulated phone. */
export async function linkWithCode (
  emulator: LinkingEmulator,
  number: string,
  options: { auth?: AuthenticationState, config?: Partial<UserFacingSocketConfig> } = {}
): Promise<{ sock: WASocket, auth: AuthenticationState, code: string }> {
  const auth = options.auth ?? makeMemoryAuthState()
  let entered: Promise<string> | undefined
  const sock = await connectUntilOpen({
    wsUrl: emulator.wsUrl,
    auth,
    config: options.config,
    onQr: (_qr, qrSock) => {
      entered ??= qrSock.requestPairingCode(number).then(async (code) => {
        await emulator.enterCode(number, code)
        return code
      })
      entered.catch(() => undefined)
    }
  })
  const code = await entered!
  return { sock, auth, code }
}
