import { proto, type WASocket } from '@whiskeysockets/baileys'
import { backoffDelay, sleep } from '../async.js'
import type { PlatformLogger as Logger } from '../logger.js'
import { STATUS_JID } from '../../jid.js'
import { onStanza, socketOpen } from '../baileys/index.js'
import type { SendProgress } from '../types.js'

// Relaying one status to a long recipient list: chunks, push-back retries, waiting out a dropped link
// and the platform's ack of each chunk (see sender.ts for why chunks under one message id are safe).

export interface RelayPolicy {
  chunkSize: number
  /** attempts per chunk (and for the media upload) before giving up on push-back */
  attempts: number
  retryBaseMs: number
  retryMaxMs: number
  /** how long a chunk waits for the platform's ack after it was written */
  ackTimeoutMs: number
  /** STATUS_STANZA: the element an LID-migrated account posts in (absent: `message`; baileys/status-post.ts) */
  statusStanza?: 'message' | 'status'
}

/** A chunk is tried again after at most this many dropped links (each one waits for the reconnect). */
export const MAX_LINK_LOSSES_PER_CHUNK = 10

export function chunk<T> (items: T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

interface BoomLike { isBoom?: boolean, output?: { statusCode?: number }, data?: unknown, message?: string }

/**
 * The platform refused a stanza: its `<ack class="message" id=… error=CODE/>`. A refused stanza reached
 * nobody (the server answers one ack per stanza, and a nack means it rejected the send: whatsapp-rust's
 * chat store marks the message ERROR on it, storages/chat-store/src/store.rs `apply_server_ack`, PR #1014,
 * 2026-07-10; whatsmeow's SendMessage fails with "server returned error CODE", send.go, since commit
 * dcbc8dd3 "Handle ack errors when sending messages", 2023-01-28). Large status batches get 429 this way
 * (devlikeapro/waha #2096, 2026-05-26: "server returned error 429" on batch 3/123; #2080, 2026-05-16).
 */
export class StanzaRefused extends Error {
  constructor (readonly code: string, what: string) {
    super(`the platform refused ${what} (error ${code})`)
    this.name = 'StanzaRefused'
  }
}

/**
 * Refusals that mean "not now" rather than "not this": 429 / rate-overlimit (the rate limit, waha #2096)
 * and 503 (service unavailable: whatsapp-rust src/client/node_io.rs lists it among the nack codes).
 * Waited out and sent again under the same id; any other code (479 SmaxInvalid, 463, 400…) is final.
 */
const PUSH_BACK_CODES = new Set(['429', '503', 'rate-overlimit'])

/**
 * Push-back the platform expects a client to wait out: rate limits (429 / rate-overlimit), service
 * unavailable, query timeouts, and the socket closing under us (the session reconnects).
 */
export function isPushBack (err: unknown): boolean {
  if (err instanceof StanzaRefused) return PUSH_BACK_CODES.has(err.code)
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

const LINK_ERROR = /\b(EPIPE|ECONNRESET|ECONNABORTED|ETIMEDOUT)\b|socket hang up|connection (closed|terminated|was lost|lost)|stream errored|not open/i

/**
 * The link under `sock` broke (or was told to restart): EPIPE, ECONNRESET, a close (428), restart
 * required (515) or any error while its WebSocket is no longer open. The chunk did not go out (or was
 * not acknowledged) and is sent again once the session reconnected.
 */
export function isLinkLoss (sock: WASocket, err: unknown): boolean {
  if (!socketOpen(sock)) return true
  if (typeof err !== 'object' || err === null) return false
  const e = err as BoomLike & { code?: unknown }
  const status = e.output?.statusCode
  if (status === 428 || status === 515) return true
  return LINK_ERROR.test(`${typeof e.code === 'string' ? e.code : ''} ${e.message ?? ''}`)
}

function linkClosed (): Error {
  return Object.assign(new Error('Connection Closed'), { isBoom: true, output: { statusCode: 428 } })
}

/**
 * Resolves on the platform's `<ack class="message" id=…>` for `messageId` on `sock` (an error ack too:
 * `error()` then has its code), rejects when the socket closes first or after `timeoutMs`. A `<status>`
 * publish stanza is acked `class="status"` (WA Web's WAWebEncryptAndSendStatusMsg maybeApplyStatusTag):
 * `ackClass`. Listening starts before the stanza is written, so a fast ack is not missed.
 */
export function awaitAck (
  sock: WASocket, messageId: string, timeoutMs: number, ackClass: 'message' | 'status' = 'message'
): { acked: Promise<void>, cancel: () => void, received: () => boolean, error: () => string | undefined } {
  let cancel = (): void => {}
  let received = false
  let error: string | undefined
  const acked = new Promise<void>((resolve, reject) => {
    let stopAcks = (): void => {}
    const onAck = (node: { attrs?: Record<string, string> }): void => {
      if (node.attrs?.id !== messageId) return
      received = true
      error = node.attrs.error
      done()
      resolve()
    }
    const onUpdate = (update: { connection?: string }): void => { if (update.connection === 'close') { done(); reject(linkClosed()) } }
    const timer = setTimeout(() => { done(); reject(new Error(`timed out after ${timeoutMs} ms waiting for the platform's ack`)) }, timeoutMs)
    const done = (): void => {
      clearTimeout(timer)
      stopAcks()
      sock.ev.off('connection.update', onUpdate)
    }
    cancel = done
    stopAcks = onStanza(sock, `ack,class:${ackClass}`, onAck)
    sock.ev.on('connection.update', onUpdate)
  })
  acked.catch(() => {})
  return { acked, cancel, received: () => received, error: () => error }
}

/** Writes one chunk; `accepted` (if any) runs once the platform acknowledged it without an error. */
export type ChunkWriter = (sock: WASocket, jids: string[]) => Promise<{ accepted?: () => Promise<void> } | undefined>

export interface RelayChunksInput {
  /** an open socket; waits for the session to reconnect. `lost`: the socket that just failed, not to be used again unless it is still open */
  socket: (lost?: WASocket) => Promise<WASocket>
  message: proto.IMessage
  messageId: string
  /** recipient JIDs in order, already de-duplicated (and without the ones that already have it) */
  jids: string[]
  policy: RelayPolicy
  logger: Logger
  additionalAttributes?: Record<string, string>
  /** what the chunks are, in logs and errors (default `status`; a revoke says `revoke`) */
  label?: string
  /** writes a chunk; default: Baileys' relayMessage with the chunk as statusJidList */
  write?: ChunkWriter
  /** the class of the ack the written stanza gets: `status` for a `<status>` publish stanza (default `message`) */
  ackClass?: 'message' | 'status'
  /** JIDs that had it before this call (a resumed send): counted in progress */
  alreadySent?: number
  /** before each chunk's first attempt */
  onChunkStart?: (jids: string[]) => Promise<void>
  /**
   * after each acknowledged chunk, with the send's progress (null for a single chunk of a fresh send):
   * the next chunk waits for it, so the chunk and its progress report commit together before it goes out
   */
  onChunk?: (jids: string[], progress: SendProgress | null) => Promise<void>
  /** a chunk written whose ack the link's close cut off: they may have it */
  onUnconfirmed?: (jids: string[]) => Promise<void>
}

/**
 * Relays one message to status@broadcast in order, chunk by chunk, all under the same message id. A chunk
 * counts once the platform acknowledged it without an error. When the link drops (EPIPE, ECONNRESET,
 * close, 428, 515) the chunk waits for the session to reconnect (bounded by the socket waiter) and goes
 * out again on the new socket; push-back (rate limits, timeouts, an ack with error 429, 503 or
 * rate-overlimit) is retried with backoff, at most `policy.attempts` times. Any other error ack fails the
 * chunk with its code (StanzaRefused): none of its recipients has the message, so none is reported unconfirmed.
 */
export async function relayInChunks (input: RelayChunksInput): Promise<void> {
  const chunks = chunk(input.jids, Math.max(1, input.policy.chunkSize))
  const already = input.alreadySent ?? 0
  const total = already + input.jids.length
  let sent = already
  for (const [index, statusJidList] of chunks.entries()) {
    const what = `${input.label ?? 'status'} chunk ${index + 1}/${chunks.length}`
    let lost: WASocket | undefined
    let losses = 0
    await input.onChunkStart?.(statusJidList)
    await withPushBackRetry({ policy: input.policy, logger: input.logger, what }, async () => {
      for (;;) {
        const sock = await input.socket(lost)
        const ack = awaitAck(sock, input.messageId, input.policy.ackTimeoutMs, input.ackClass)
        let written = false
        let accepted: (() => Promise<void>) | undefined
        // a failure here only means the next post distributes the key to those devices again
        const acceptedIfOk = async (): Promise<void> => {
          if (ack.error() === undefined) await accepted?.().catch((err: unknown) => { input.logger.warn({ err }, `${what}: could not record who holds the sender key`) })
        }
        try {
          if (input.write !== undefined) {
            accepted = (await input.write(sock, statusJidList))?.accepted
          } else {
            await sock.relayMessage(STATUS_JID, input.message, {
              messageId: input.messageId,
              statusJidList,
              ...(input.additionalAttributes !== undefined ? { additionalAttributes: input.additionalAttributes } : {})
            })
          }
          written = true
          await ack.acked
          const code = ack.error()
          if (code !== undefined) throw new StanzaRefused(code, what)
          await acceptedIfOk()
          return
        } catch (err) {
          ack.cancel()
          // refused: it reached nobody (so not "may have it"); withPushBackRetry sends it again or ends the send
          const code = ack.error()
          if (code !== undefined) throw err instanceof StanzaRefused ? err : new StanzaRefused(code, what)
          // the platform acknowledged the stanza before the error (e.g. the link dropped right after): it went out
          if (ack.received()) { await acceptedIfOk(); return }
          // written, but the ack never came: the platform may have it (a revoke must include them)
          if (written) await input.onUnconfirmed?.(statusJidList)
          if (!isLinkLoss(sock, err) || ++losses > MAX_LINK_LOSSES_PER_CHUNK) throw err
          input.logger.warn({ err, messageId: input.messageId, losses }, `${what}: the link dropped; sending it again once reconnected`)
          lost = sock
        }
      }
    })
    sent += statusJidList.length
    await input.onChunk?.(statusJidList, chunks.length > 1 || already > 0 ? { sent, total } : null)
  }
}

/** What sending needs of its session. */
