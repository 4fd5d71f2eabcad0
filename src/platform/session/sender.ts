import { jidNormalizedUser, proto, type WAMessageUpdate, type WASocket } from '@whiskeysockets/baileys'
import { backoffDelay, SerialQueue, sleep } from '../async.js'
import { PlatformError, isPlatformError } from '../errors.js'
import { pnDigits, pnJid } from '../lid.js'
import type { PlatformLogger as Logger } from '../logger.js'
import type { SendStatusInput, SendStatusResult } from '../types.js'
import { messageOf, type Emit } from './linking.js'
import { buildStatusMessage, revokeMessage, STATUS_JID } from './status-message.js'

// Statuses go to `status@broadcast` as one sender-key message (skmsg) plus, per recipient device, a
// pairwise-encrypted sender-key distribution message. In rc14 relayMessage (lib/Socket/messages-send.js,
// the isGroupOrStatus branch) never reads `sender-key-memory` for status@broadcast, so EVERY call sends
// the distribution message to every device of the `statusJidList` it is given. Relaying a large list in
// chunks under one message id therefore reaches each device exactly once per chunk, as long as no JID
// appears twice in a chunk or in two chunks (a duplicate JID would be encrypted for twice): the list is
// de-duplicated before chunking. No `broadcast` attribute or other option is needed for status in rc14.

export interface RelayPolicy {
  chunkSize: number
  /** attempts per chunk (and for the media upload) before giving up */
  attempts: number
  retryBaseMs: number
  retryMaxMs: number
}

export function chunk<T> (items: T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

interface BoomLike { isBoom?: boolean, output?: { statusCode?: number }, data?: unknown, message?: string }

/**
 * Push-back the platform expects a client to wait out: rate limits (429 / rate-overlimit), service
 * unavailable, query timeouts, and the socket closing under us (the session reconnects).
 */
export function isPushBack (err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false
  const e = err as BoomLike
  const status = e.output?.statusCode
  const data = typeof e.data === 'number' ? e.data : undefined
  if (status === 408 || status === 428 || status === 429 || status === 503) return true
  if (data === 408 || data === 429 || data === 503) return true
  return /rate-?overlimit|timed out|connection closed|connection terminated|connection was lost/i.test(e.message ?? '')
}

export interface RetryContext {
  policy: RelayPolicy
  logger: Logger
  what: string
}

/** Runs `step` until it succeeds, retrying push-back with backoff; other errors end at once. */
export async function withPushBackRetry<T> (ctx: RetryContext, step: (attempt: number) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await step(attempt)
    } catch (err) {
      if (!isPushBack(err) || attempt + 1 >= ctx.policy.attempts) throw err
      const delayMs = backoffDelay(attempt, ctx.policy.retryBaseMs, ctx.policy.retryMaxMs)
      ctx.logger.warn({ err, attempt: attempt + 1, delayMs }, `${ctx.what}: platform pushed back, retrying`)
      await sleep(delayMs)
    }
  }
}

export interface RelayChunksInput {
  /** an open socket; may wait for the session to reconnect */
  socket: () => Promise<WASocket>
  message: proto.IMessage
  messageId: string
  /** recipient JIDs in order, already de-duplicated */
  jids: string[]
  policy: RelayPolicy
  logger: Logger
  additionalAttributes?: Record<string, string>
  onProgress?: (sent: number, total: number) => void
}

/** Relays one message to status@broadcast in order, chunk by chunk, all under the same message id. */
export async function relayInChunks (input: RelayChunksInput): Promise<void> {
  const chunks = chunk(input.jids, Math.max(1, input.policy.chunkSize))
  let sent = 0
  for (const [index, statusJidList] of chunks.entries()) {
    await withPushBackRetry({ policy: input.policy, logger: input.logger, what: `status chunk ${index + 1}/${chunks.length}` }, async () => {
      const sock = await input.socket()
      await sock.relayMessage(STATUS_JID, input.message, {
        messageId: input.messageId,
        statusJidList,
        ...(input.additionalAttributes !== undefined ? { additionalAttributes: input.additionalAttributes } : {})
      })
    })
    sent += statusJidList.length
    if (chunks.length > 1) input.onProgress?.(sent, input.jids.length)
  }
}

const SENT_CACHE_SIZE = 64

/** What sending needs of its session. */
export interface SenderHost {
  readonly id: string
  readonly log: Logger
  policy: () => RelayPolicy
  /** an open socket; waits for a reconnect, fails with NOT_CONNECTED when none comes */
  openSocket: () => Promise<WASocket>
  ownNumber: () => string | null
  newMessageId: () => string
  emit: Emit
}

/**
 * Sends and revokes one session's statuses, one at a time. Each chunk picks up whatever socket is open
 * then, so a reconnect in the middle of a large send does not fail it.
 */
export class StatusSender {
  readonly #queue = new SerialQueue()
  /** status messages we sent recently: served to retry receipts, and matched by bad acks */
  readonly #sent = new Map<string, proto.IMessage>()

  constructor (private readonly host: SenderHost) {}

  sentMessage (id: string): proto.IMessage | undefined {
    return this.#sent.get(id)
  }

  async send (input: SendStatusInput): Promise<SendStatusResult> {
    return await this.#queue.run(async () => {
      const { log } = this.host
      const policy = this.host.policy()
      const first = await this.host.openSocket()
      const own = this.host.ownNumber() ?? pnDigits(first.user?.id)
      if (own === null) throw new PlatformError('NOT_CONNECTED')
      const recipients = [...new Set(input.recipients)].filter((digits) => digits !== own)
      const jids = [pnJid(own), ...recipients.map(pnJid)]
      let message: proto.IMessage
      try {
        message = await withPushBackRetry({ policy, logger: log, what: 'status media upload' }, async (attempt) => {
          const sock = attempt === 0 ? first : await this.host.openSocket()
          return await buildStatusMessage(input.content, sock.waUploadToServer, log)
        })
      } catch (err) {
        throw new PlatformError('SEND_FAILED', messageOf(err))
      }
      this.#remember(input.messageId, message)
      try {
        await relayInChunks({
          socket: this.host.openSocket,
          message,
          messageId: input.messageId,
          jids,
          policy,
          logger: log,
          ...(input.onProgress !== undefined ? { onProgress: input.onProgress } : {})
        })
      } catch (err) {
        if (isPlatformError(err, 'NOT_CONNECTED')) throw err
        throw new PlatformError('SEND_FAILED', messageOf(err))
      }
      log.info({ messageId: input.messageId, recipients: jids.length, kind: input.content.kind }, 'status sent')
      return { messageId: input.messageId, recipientJids: jids }
    })
  }

  /** Revokes a status for the JIDs it went to; false when the platform could not be told. */
  async revoke (messageId: string, recipientJids: string[]): Promise<boolean> {
    return await this.#queue.run(async () => {
      const jids = [...new Set(recipientJids.map((j) => jidNormalizedUser(j)))]
      if (jids.length === 0) return false
      const revokeId = this.host.newMessageId()
      const message = revokeMessage(messageId)
      this.#remember(revokeId, message)
      try {
        // edit="7" marks a sender revoke, as Baileys' sendMessage({ delete }) does
        await relayInChunks({
          socket: this.host.openSocket,
          message,
          messageId: revokeId,
          jids,
          policy: this.host.policy(),
          logger: this.host.log,
          additionalAttributes: { edit: '7' }
        })
        return true
      } catch (err) {
        this.host.log.warn({ err, messageId }, 'could not revoke status')
        return false
      }
    })
  }

  /** Rejections the platform reports after a status was written (e.g. error 479). */
  onMessagesUpdate (updates: WAMessageUpdate[]): void {
    for (const { key, update } of updates) {
      if (update.status !== proto.WebMessageInfo.Status.ERROR || key.fromMe !== true || key.id == null) continue
      if (key.remoteJid !== STATUS_JID && !this.#sent.has(key.id)) continue
      const error = update.messageStubParameters?.[0] ?? 'unknown error'
      this.host.log.warn({ messageId: key.id, error }, 'platform rejected a status')
      this.host.emit('status-error', { sessionId: this.host.id, messageId: key.id, error })
    }
  }

  #remember (id: string, message: proto.IMessage): void {
    this.#sent.set(id, message)
    if (this.#sent.size > SENT_CACHE_SIZE) {
      const oldest = this.#sent.keys().next().value
      if (oldest !== undefined) this.#sent.delete(oldest)
    }
  }
}
