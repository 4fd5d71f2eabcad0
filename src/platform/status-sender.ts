import { extname } from 'node:path'
import {
  prepareWAMessageMedia,
  proto,
  type WAMediaUploadFunction,
  type WASocket
} from '@whiskeysockets/baileys'
import type { PlatformLogger as Logger } from './logger.js'
import type { StatusContent } from './types.js'
import { backoffDelay, sleep } from './async.js'

// Statuses go to `status@broadcast` as one sender-key message (skmsg) plus, per recipient device, a
// pairwise-encrypted sender-key distribution message. In rc14 relayMessage (lib/Socket/messages-send.js,
// the isGroupOrStatus branch) never reads `sender-key-memory` for status@broadcast, so EVERY call sends
// the distribution message to every device of the `statusJidList` it is given. Relaying a large list in
// chunks under one message id therefore reaches each device exactly once per chunk, as long as no JID
// appears twice in a chunk or in two chunks (a duplicate JID would be encrypted for twice): the list is
// de-duplicated before chunking. No `broadcast` attribute or other option is needed for status in rc14.

export const STATUS_JID = 'status@broadcast'

export interface RelayPolicy {
  chunkSize: number
  /** attempts per chunk (and for the media upload) before giving up */
  attempts: number
  retryBaseMs: number
  retryMaxMs: number
}

/** `#RRGGBB` (opaque) or `#AARRGGBB` → the unsigned ARGB integer WhatsApp stores. */
export function argbFromHex (color: string): number {
  const m = /^#?([0-9a-f]{6}|[0-9a-f]{8})$/i.exec(color.trim())
  if (m === null) throw new Error(`invalid colour ${JSON.stringify(color)}: expected #RRGGBB or #AARRGGBB`)
  const hex = m[1].length === 6 ? `ff${m[1]}` : m[1]
  return Number.parseInt(hex, 16) >>> 0
}

const MIME_BY_EXTENSION: Record<string, string> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.bmp': 'image/bmp',
  '.mp4': 'video/mp4',
  '.m4v': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mkv': 'video/x-matroska',
  '.avi': 'video/x-msvideo',
  '.wmv': 'video/x-ms-wmv',
  '.flv': 'video/x-flv',
  '.3gp': 'video/3gpp'
}

function guessMimetype (source: { path: string } | { url: string }): string | undefined {
  const name = 'path' in source ? source.path : new URL(source.url).pathname
  return MIME_BY_EXTENSION[extname(name).toLowerCase()]
}

/** Builds the status message once; image/video media is encrypted and uploaded here, once. */
export async function buildStatusMessage (content: StatusContent, upload: WAMediaUploadFunction, logger: Logger): Promise<proto.IMessage> {
  if (content.kind === 'text') {
    return proto.Message.fromObject({
      extendedTextMessage: {
        text: content.text,
        ...(content.backgroundColor !== undefined ? { backgroundArgb: argbFromHex(content.backgroundColor) } : {}),
        ...(content.font !== undefined ? { font: content.font } : {})
      }
    })
  }
  const url = 'path' in content.source ? content.source.path : content.source.url
  const mimetype = content.mimetype ?? guessMimetype(content.source)
  const common = { caption: content.caption, ...(mimetype !== undefined ? { mimetype } : {}) }
  const media = content.kind === 'image'
    ? { image: { url }, ...common }
    : { video: { url }, ...common }
  return await prepareWAMessageMedia(media, { upload, logger, mediaUploadTimeoutMs: 60_000 })
}

/** Revokes (deletes for everyone) one of our statuses. */
export function revokeMessage (messageId: string): proto.IMessage {
  return proto.Message.fromObject({
    protocolMessage: {
      key: { remoteJid: STATUS_JID, fromMe: true, id: messageId },
      type: proto.Message.ProtocolMessage.Type.REVOKE
    }
  })
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
