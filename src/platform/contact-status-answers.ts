import type { WASocket } from '@whiskeysockets/baileys'
import { statusReply, writeStatusReaction, writeStatusReply, type QuotedStatus } from './baileys/status-addon.js'
import { PlatformError } from './errors.js'
import { awaitAck } from './session/chunk-relay.js'

export type { QuotedStatus } from './baileys/status-addon.js'

// The account answering a contact's status (issue 39): its like (an E2EE reaction to status@broadcast, pairwise
// to the poster's devices: baileys/status-addon.ts) and its reply (a 1:1 message quoting the status). Each
// resolves once the platform acknowledged the stanza without an error: the caller records it only then, so a
// like or reply the platform refused is never listed, and one sent but not recorded (a crash in between) is
// simply sent again by the next call (a reaction replaces the earlier one).

export interface LikeInput {
  statusId: string
  /** the poster as the status named them */
  poster: string
  /** empty: the like is taken back */
  emoji: string
}

export interface ReplyInput {
  statusId: string
  poster: string
  /** the JID the reply is sent to (the poster's LID where known) */
  to: string
  text: string
  quoted: QuotedStatus
}

async function acknowledged (sock: WASocket, messageId: string, ackTimeoutMs: number, what: string, write: () => Promise<unknown>): Promise<void> {
  const ack = awaitAck(sock, messageId, ackTimeoutMs)
  try {
    await write()
    await ack.acked
  } catch (err) {
    ack.cancel()
    throw new PlatformError('SEND_FAILED', `${what} did not go out: ${(err as Error).message}`)
  }
  const code = ack.error()
  if (code !== undefined) throw new PlatformError('SEND_FAILED', `the platform refused ${what} (error ${code})`)
}

/** Sends the like (or its removal); resolves with the reaction's message id once acknowledged. */
export async function sendStatusLike (
  sock: WASocket, messageId: string, like: LikeInput, ackTimeoutMs: number
): Promise<{ messageId: string, devices: number }> {
  let devices = 0
  await acknowledged(sock, messageId, ackTimeoutMs, like.emoji === '' ? 'the like\'s removal' : 'the like', async () => {
    devices = (await writeStatusReaction(sock, { messageId, statusId: like.statusId, poster: like.poster, emoji: like.emoji, at: Date.now() })).length
  })
  return { messageId, devices }
}

/** Sends the reply; resolves with its message id once acknowledged. */
export async function sendStatusReply (sock: WASocket, messageId: string, reply: ReplyInput, ackTimeoutMs: number): Promise<{ messageId: string }> {
  const message = statusReply(reply.statusId, reply.poster, reply.text, reply.quoted)
  await acknowledged(sock, messageId, ackTimeoutMs, 'the reply', async () => { await writeStatusReply(sock, reply.to, messageId, message) })
  return { messageId }
}
