import {
  DisconnectReason,
  getBinaryNodeChildren,
  jidNormalizedUser,
  proto,
  unpadRandomMax16,
  type BinaryNode,
  type SocketConfig,
  type WASocket
} from '@whiskeysockets/baileys'
import { committingSignalRepository, onFrame } from './baileys/index.js'
import { encReactionTarget, readEncReaction } from './enc-reaction.js'
import { STATUS_JID } from '../jid.js'
import { lidUserOf, pnDigits } from './lid.js'
import type { PlatformLogger as Logger } from './logger.js'
import type { InteractionSink, StatusInteraction } from './types.js'

// Reactions and replies to the session's statuses: committed before the message is acknowledged.
//
// rc14 (lib/Socket/messages-recv.js, handleMessage) acknowledges a message with its delivery receipt
// (sendReceipt) right after `await decrypt()`, and decrypt() (Utils/decode-wa-message.js) calls the
// signal repository's decryptMessage for each <enc>, then unpads and decodes the plaintext itself. The
// repository comes from the socket config (`makeSignalRepository`): ours is Baileys' own with
// decryptMessage wrapped (baileys/signal.ts, committingSignalRepository), so the plaintext is read, and a
// reaction or reply to a status committed, before decrypt() returns, so before any receipt can go out.
//
// The wrap runs inside the key store's transaction for that sender, so the Signal session advances only
// after our commit: a crash in between leaves a message that still decrypts when the platform delivers
// it again (and the commit is idempotent). When the commit fails, the transaction is
// abandoned, the socket is ended (nothing more can be sent on it: Baileys' retry request and nack both
// need an open socket) and the platform delivers the message again at the next login.
//
// The stanza (sender, id, time) is not passed to decryptMessage, only its ciphertext: the raw 'frame'
// listener, which runs before Baileys handles the stanza, remembers each <enc> payload's stanza by
// identity (the same Uint8Array reaches decryptMessage).

interface Seen { stanza: BinaryNode, sock: WASocket }

type Parsed = StatusInteraction extends infer T ? T extends unknown ? Omit<T, 'fromNumber'> : never : never

/** The text of a message that quotes a status, whatever its kind (text, or a caption). */
function replyOf (message: proto.IMessage): { text: string, statusMessageId: string } | null {
  for (const value of Object.values(message) as unknown[]) {
    if (value === null || typeof value !== 'object') continue
    const content = value as { contextInfo?: proto.IContextInfo | null, text?: string | null, caption?: string | null }
    const ctx = content.contextInfo
    if (ctx?.remoteJid !== STATUS_JID || typeof ctx.stanzaId !== 'string' || ctx.stanzaId === '') continue
    return { text: content.text ?? content.caption ?? '', statusMessageId: ctx.stanzaId }
  }
  return null
}

/**
 * A reaction to or a reply to a status in a decoded message (null for anything else). Whether the status
 * is one of the session's is the sink's to tell (by its id).
 */
export function parseStatusInteraction (message: proto.IMessage, stanza: { id: string, from: string, t?: string }): Parsed | null {
  const seconds = Number(stanza.t)
  const sentAt = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now()
  const fromJid = jidNormalizedUser(stanza.from)
  const base = { messageId: stanza.id, fromJid }
  const reaction = message.reactionMessage
  if (reaction !== null && reaction !== undefined) {
    const key = reaction.key
    if (key?.remoteJid !== STATUS_JID || typeof key.id !== 'string' || key.id === '') return null
    const ms = Number(reaction.senderTimestampMs ?? 0)
    return { ...base, kind: 'reaction', statusMessageId: key.id, emoji: reaction.text ?? '', at: ms > 0 ? ms : sentAt }
  }
  const reply = replyOf(message)
  return reply === null ? null : { ...base, kind: 'reply', ...reply, at: sentAt }
}

export interface InteractionIntakeOptions {
  sessionId: string
  sink: InteractionSink
  /** a LID user's number as far as it is known (learned or stored), read synchronously */
  numberForLid: (lidUser: string) => string | null
  me: () => { id?: string, lid?: string } | undefined
  live: () => boolean
  logger: Logger
  /** the messageSecret of one of the account's statuses (an encrypted reaction is read with it); null: unknown */
  statusSecret?: (statusId: string) => Promise<Uint8Array | null>
}

export class InteractionIntake {
  readonly #seen = new WeakMap<Uint8Array, Seen>()

  constructor (private readonly options: InteractionIntakeOptions) {}

  /** Baileys' signal repository with decryptMessage committing what it decrypted first (see above). */
  readonly makeSignalRepository: SocketConfig['makeSignalRepository'] = committingSignalRepository(async (ciphertext, plaintext) => { await this.#take(ciphertext, plaintext) })

  listen (sock: WASocket): void {
    onFrame(sock, (frame) => {
      if (frame.tag !== 'message' || !Array.isArray(frame.content)) return
      for (const enc of getBinaryNodeChildren(frame, 'enc')) {
        if (enc.content instanceof Uint8Array) this.#seen.set(enc.content, { stanza: frame, sock })
      }
    })
  }

  async #take (ciphertext: Uint8Array, plaintext: Uint8Array): Promise<void> {
    const seen = this.#seen.get(ciphertext)
    if (seen === undefined || !this.options.live()) return
    const { stanza, sock } = seen
    const { id, t, participant } = stanza.attrs
    // WA Web's E2EE like comes from status@broadcast, its sender the participant (whatsapp-rust PR #563: the
    // outer `to` of a status reaction is status@broadcast, which "mirrors incoming `from`"); else 1:1 messages
    // only (a group's or another broadcast's sender is its participant)
    const viaStatus = stanza.attrs.from === STATUS_JID && participant !== undefined
    const from = viaStatus ? participant : stanza.attrs.from
    if (id === undefined || from === undefined || (!viaStatus && participant !== undefined) || stanza.attrs.recipient !== undefined) return
    let parsed: Parsed | null
    let message: proto.IMessage
    try {
      message = proto.Message.decode(unpadRandomMax16(plaintext))
      message = message.deviceSentMessage?.message ?? message
      parsed = parseStatusInteraction(message, { id, from, t })
    } catch {
      return // Baileys decodes the same bytes next and handles what it cannot read
    }
    parsed ??= await this.#encReaction(message, { id, from, t }, stanza)
    if (parsed === null || (viaStatus && parsed.kind !== 'reaction')) return
    const fromNumber = this.#numberOf(parsed.fromJid, stanza)
    const me = this.options.me()
    const ownLid = me?.lid === undefined ? undefined : jidNormalizedUser(me.lid)
    // our own devices: nobody else's answer
    if ((fromNumber !== null && fromNumber === pnDigits(me?.id)) || parsed.fromJid === ownLid) return
    const interaction: StatusInteraction = { ...parsed, fromNumber }
    try {
      await this.options.sink.commit(this.options.sessionId, interaction)
    } catch (err) {
      this.options.logger.error({ err, id }, 'status reaction/reply not committed: left unacknowledged, reconnecting so it is delivered again')
      void sock.end(Object.assign(new Error('status reaction/reply not committed'), { output: { statusCode: DisconnectReason.connectionClosed } }))
      throw err
    }
  }

  /** an encrypted reaction to one of the account's statuses, read with the status' secret (enc-reaction.ts) */
  async #encReaction (message: proto.IMessage, stanza: { id: string, from: string, t?: string }, node: BinaryNode): Promise<Parsed | null> {
    const statusId = encReactionTarget(message)
    if (statusId === null) return null
    const secret = await this.options.statusSecret?.(statusId) ?? null
    const me = this.options.me()
    const read = secret === null
      ? null
      : readEncReaction(message, statusId, secret, [me?.lid ?? '', me?.id ?? ''], [stanza.from, node.attrs.sender_pn ?? node.attrs.participant_pn ?? ''])
    if (read === null) {
      this.options.logger.warn({ id: stanza.id, statusId, secret: secret !== null }, 'an encrypted reaction to a status could not be read')
      return null
    }
    const seconds = Number(stanza.t)
    const at = read.at ?? (Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now())
    return { messageId: stanza.id, fromJid: jidNormalizedUser(stanza.from), kind: 'reaction', statusMessageId: statusId, emoji: read.emoji, at }
  }

  /** digits of a PN sender; a LID sender's from the stanza's `sender_pn` or the known mapping */
  #numberOf (jid: string, stanza: BinaryNode): string | null {
    const lidUser = lidUserOf(jid)
    if (lidUser === null) return pnDigits(jid)
    // a 1:1 message names the sender's number `sender_pn`, a status@broadcast one `participant_pn`
    const pn = stanza.attrs.sender_pn ?? stanza.attrs.participant_pn
    const alt = pnDigits(pn === undefined ? undefined : jidNormalizedUser(pn))
    return alt ?? this.options.numberForLid(lidUser)
  }
}
