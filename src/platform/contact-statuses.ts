import { DisconnectReason, getContentType, isJidGroup, jidNormalizedUser, normalizeMessageContent, type BinaryNode, type proto, type WASocket } from '@whiskeysockets/baileys'
import { SerialQueue } from './async.js'
import { holdFrame, onFrame, releaseFrame, socketOpen } from './baileys/index.js'
import {
  ackStatusStanza, decryptStatusStanza, isContactStatusStanza, sendStatusDeliveryReceipt, type DecryptedStatus, type StatusMediaRef
} from './baileys/status-stanza.js'
import { mentionsOwnAccount } from './baileys/status-mention.js'
import { lidUserOf, pnDigits } from './lid.js'
import type { PlatformLogger as Logger } from './logger.js'

// Contacts' statuses: what the account's contacts post, as the platform delivers it today, a top-level
// `<status>` stanza owed an `<ack class="status">` (oxidezap/whatsapp-rust PR #1101, merged 2026-07-25; tulir/whatsmeow
// a2381054, 2026-07-20). rc14 has no handler for the tag (lib/Socket/messages-recv.js), so nothing acked it: the
// server kept each one queued, redelivered it at every login and ended the stream about every 50 minutes.
//
// Each stanza is held from Baileys (baileys/socket.ts holdFrame, as receipts are) and taken in arrival order, one
// at a time (a later skmsg needs the sender key an earlier pkmsg distributed: whatsapp-rust processes status
// stanzas inline for that reason): decrypted by Baileys' message pipeline as WA Web retags it, committed through
// the sink inside the same key-store transaction (baileys/status-stanza.ts), and only then acked `class="status"`
// and, when it decrypted, answered with WA Web's delivery receipt (`context="status"`, whatsapp-rust PR #630).
// Never a read receipt: that is sent only when asked (viewContactStatus). A stanza that does not decrypt is
// recorded as such and acked all the same: WA Web acks a status@broadcast stanza on its drop paths too ("expired
// status, missing sender key, generic" failures, whatsapp-rust PR #630 `should_ack`), else it would come back at
// every login. When the commit fails the stanza is not acked and the socket is ended: it comes again at the next
// login (the commit is idempotent by message id).

/** A contact's status as the service keeps it. */
export interface ContactStatus {
  /** the platform's message id (the stanza id) */
  messageId: string
  /** who posted, as the stanza named them (`participant`, device dropped): `<lid>@lid` or `<number>@s.whatsapp.net` */
  fromJid: string
  fromLid: string | null
  /** digits; null while a LID is not mapped */
  fromNumber: string | null
  type: 'text' | 'image' | 'video' | 'audio' | 'other' | 'undecryptable'
  text: string | null
  caption: string | null
  mimetype: string | null
  /** bytes of the media, as the message states */
  size: number | null
  /** what downloading the media needs (baileys/status-stanza.ts StatusMediaRef, JSON); null: no media */
  mediaRef: string | null
  /** ms since epoch: the stanza's time */
  postedAt: number
  /** why it could not be read (type `undecryptable`) */
  error: string | null
  /** the status mentions the account (baileys/status-mention.ts mentionsOwnAccount) */
  mentionsMe: boolean
  /** a group status: the group it was posted in (`…@g.us`); null for a status to status@broadcast */
  groupJid: string | null
  /** the group's subject when known (null: not looked up; the stanza does not carry it) */
  groupSubject: string | null
}

/**
 * Where contacts' statuses are committed; the service provides it. Resolved → committed (the stanza is acked
 * then); thrown / rejected → nothing was, the socket is closed and the stanza comes again at the next login.
 * A redelivery must be harmless (the message id makes it idempotent), and must not replace a status that was
 * read by one that could not be (a redelivered stanza no longer decrypts once the first copy advanced the keys).
 */
export interface ContactStatusSink {
  commit: (sessionId: string, status: ContactStatus) => Promise<void>
}

export interface ContactStatusIntakeOptions {
  sessionId: string
  sink: ContactStatusSink
  /** a LID user's number as far as it is known, read synchronously */
  numberForLid: (lidUser: string) => string | null
  live: () => boolean
  logger: Logger
}

const MEDIA_KINDS = { imageMessage: 'image', videoMessage: 'video', audioMessage: 'audio' } as const
type MediaContent = proto.Message.IImageMessage & proto.Message.IVideoMessage & proto.Message.IAudioMessage

/** What a decrypted status message says (text, caption, media), in the service's terms. */
export function readStatusMessage (message: proto.IMessage): Pick<ContactStatus, 'type' | 'text' | 'caption' | 'mimetype' | 'size' | 'mediaRef'> {
  const content = normalizeMessageContent(message) ?? message
  const kind = getContentType(content)
  const none = { text: null, caption: null, mimetype: null, size: null, mediaRef: null }
  if (kind === 'conversation') return { ...none, type: 'text', text: content.conversation ?? '' }
  if (kind === 'extendedTextMessage') return { ...none, type: 'text', text: content.extendedTextMessage?.text ?? '' }
  if (kind !== undefined && kind in MEDIA_KINDS) {
    const media = content[kind] as MediaContent
    const mediaKind = MEDIA_KINDS[kind as keyof typeof MEDIA_KINDS]
    const size = media.fileLength === null || media.fileLength === undefined ? null : Number(media.fileLength)
    const ref: StatusMediaRef | null = media.mediaKey === null || media.mediaKey === undefined
      ? null
      : { kind: mediaKind, url: media.url ?? null, directPath: media.directPath ?? null, mediaKey: Buffer.from(media.mediaKey).toString('base64'), mimetype: media.mimetype ?? null, size }
    const mediaRef = ref === null ? null : JSON.stringify(ref)
    return { type: mediaKind, text: null, caption: media.caption ?? null, mimetype: media.mimetype ?? null, size, mediaRef }
  }
  return { ...none, type: 'other' }
}

export class ContactStatusIntake {
  readonly #queue = new SerialQueue()

  constructor (private readonly options: ContactStatusIntakeOptions) {}

  listen (sock: WASocket): void {
    onFrame(sock, (frame) => {
      if (!isContactStatusStanza(frame) || !this.options.live()) return
      // Baileys never sees it (it has no handler for the tag; held, a later one that has could not ack it first)
      holdFrame(frame)
      void this.#queue.run(async () => { await this.#take(sock, frame) })
    })
  }

  async #take (sock: WASocket, frame: BinaryNode): Promise<void> {
    const { sessionId, sink, logger } = this.options
    const id = frame.attrs.id
    // a closed socket cannot ack: the platform delivers the stanza again at the next login
    if (!socketOpen(sock) || !this.options.live()) return
    let status: ContactStatus
    try {
      status = await decryptStatusStanza(sock, frame, logger, async (decrypted) => {
        const read = this.#read(sock, frame, decrypted)
        await sink.commit(sessionId, read)
        return read
      })
    } catch (err) {
      logger.error({ err, id }, "contact's status not committed: left unacknowledged, reconnecting so it is delivered again")
      void sock.end(Object.assign(new Error("contact's status not committed"), { output: { statusCode: DisconnectReason.connectionClosed } }))
      return
    }
    releaseFrame(frame, 'status')
    if (!socketOpen(sock)) return
    try {
      await ackStatusStanza(sock, frame)
      if (status.type !== 'undecryptable') await sendStatusDeliveryReceipt(sock, frame)
    } catch (err) {
      logger.warn({ err, id }, "could not ack a contact's status; the platform sends it again")
    }
  }

  #read (sock: WASocket, frame: BinaryNode, decrypted: DecryptedStatus): ContactStatus {
    const participant = frame.attrs.participant ?? ''
    const fromJid = participant === '' ? '' : jidNormalizedUser(participant)
    const lidUser = lidUserOf(fromJid)
    const statedPn = frame.attrs.participant_pn === undefined ? null : pnDigits(jidNormalizedUser(frame.attrs.participant_pn))
    const fromNumber = lidUser === null ? pnDigits(fromJid) : statedPn ?? this.options.numberForLid(lidUser)
    const seconds = Number(frame.attrs.t)
    const postedAt = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now()
    const me = sock.authState.creds.me
    const groupJid = isJidGroup(frame.attrs.from) === true ? frame.attrs.from : null
    const base = {
      messageId: frame.attrs.id, fromJid, fromLid: lidUser === null ? null : `${lidUser}@lid`, fromNumber, postedAt,
      mentionsMe: mentionsOwnAccount(frame, [me?.id, me?.lid]), groupJid, groupSubject: null
    }
    if (decrypted.message === null) {
      return { ...base, type: 'undecryptable', text: null, caption: null, mimetype: null, size: null, mediaRef: null, error: decrypted.error }
    }
    return { ...base, ...readStatusMessage(decrypted.message), error: null }
  }
}
