import {
  decryptMessageNode,
  downloadContentFromMessage,
  isJidGroup,
  proto,
  type BinaryNode,
  type WASocket
} from '@whiskeysockets/baileys'
import type { Readable } from 'node:stream'
import { STATUS_JID } from '../../jid.js'
import type { PlatformLogger as Logger } from '../logger.js'

// A contact's status as the platform delivers it today: a top-level `<status from="status@broadcast"
// participant type id t><enc …/></status>` stanza (oxidezap/whatsapp-rust PR #1101, merged 2026-07-25; tulir/whatsmeow
// a2381054 "client: handle <status> nodes", 2026-07-20). rc14 registers no handler for the tag (assumption
// `status-stanza-unhandled`), so the service runs WA Web's steps itself, with Baileys' own pieces:
// WA Web's `handleMessagingStanza` retags it `message` and runs its normal pipeline; here the retagged stanza
// goes through Baileys' message decryption (decryptMessageNode: the pkmsg's sender key distribution is
// processed and kept in the key store like any other, the skmsg decrypted with it; assumption
// `status-stanza-decrypt`), inside one transaction of the socket's key store (assumption
// `decrypt-in-key-transaction`), so the Signal state advances only when the caller's commit succeeded.
// The ack and the receipts are written here with sendNode (public), in WA Web's shapes.

/**
 * a `<status>` stanza from status@broadcast, or from a group (a group status: WA Web's WAWebCommsHandleMessagingStanza
 * takes a `<status>` whose `from` is a group JID as one, `isGroupStatusStanza`; WASmaxInStatusDeliverFromGroupMixin).
 * A newsletter's `<status>` is another thing (whatsapp-rust PR #1101).
 */
export function isContactStatusStanza (frame: BinaryNode): boolean {
  const from = frame.attrs.from
  return frame.tag === 'status' && (from === STATUS_JID || isJidGroup(from) === true) && typeof frame.attrs.id === 'string' && frame.attrs.id !== ''
}

/** What Baileys' decryption made of the stanza: the message, or why it could not be read. */
export interface DecryptedStatus { message: proto.IMessage | null, error: string | null }

/**
 * Decrypts the stanza with Baileys' message pipeline as WA Web retags it (`status` → `message`), and runs
 * `commit` with the result, all inside one key-store transaction: the session and sender-key writes of the
 * decryption are committed only after `commit` resolved; a throw abandons them (the stanza then decrypts
 * again when the platform delivers it again). Assumptions `status-stanza-decrypt`, `decrypt-in-key-transaction`.
 */
export async function decryptStatusStanza<T> (
  sock: WASocket, frame: BinaryNode, logger: Logger, commit: (decrypted: DecryptedStatus) => Promise<T>
): Promise<T> {
  const me = sock.authState.creds.me
  if (me?.id === undefined) throw new Error('not logged in')
  const keys = sock.authState.keys as { transaction?: <R>(work: () => Promise<R>, key: string) => Promise<R> }
  if (typeof keys.transaction !== 'function') throw new Error('Baileys assumption "decrypt-in-key-transaction" broke: the signal key store has no transactions')
  return await keys.transaction(async () => {
    let decrypted: DecryptedStatus
    try {
      const { fullMessage, decrypt } = decryptMessageNode({ ...frame, tag: 'message' }, me.id, me.lid ?? '', sock.signalRepository, logger as never)
      await decrypt()
      const failed = fullMessage.messageStubType === proto.WebMessageInfo.StubType.CIPHERTEXT
      const message = failed ? null : fullMessage.message ?? null
      const error = failed ? String(fullMessage.messageStubParameters?.[0] ?? 'could not decrypt') : message === null ? 'no message in the stanza' : null
      decrypted = { message, error }
    } catch (err) {
      // a stanza Baileys cannot even decode (no participant…) would fail the same way at every login: recorded as such
      decrypted = { message: null, error: (err as Error).message }
    }
    return await commit(decrypted)
  }, STATUS_JID)
}

/**
 * `<ack class="status" id to="status@broadcast" participant type from=<own device>>`: how WA Web acks it
 * (whatsapp-rust PR #1101 test `status_stanza_gets_transport_ack`: class status, id, to, participant, the stanza's
 * type echoed, and "WA Web stamps the own device JID for both classes"; whatsmeow's sendAck builds the same
 * without `from`). Written with sendNode (public API).
 */
export async function ackStatusStanza (sock: WASocket, frame: BinaryNode): Promise<void> {
  const { id, from, participant, type } = frame.attrs
  const own = sock.authState.creds.me?.id
  await sock.sendNode({
    tag: 'ack',
    attrs: { class: 'status', id, to: from, ...(participant !== undefined ? { participant } : {}), ...(type !== undefined ? { type } : {}), ...(own !== undefined ? { from: own } : {}) }
  })
}

/**
 * The delivery receipt WA Web sends for a status it decrypted: `<receipt to="status@broadcast" id participant
 * context="status">`, no type (delivered). whatsapp-rust PR #630 (src/receipt.rs, WA Web `DeliveryReceiptJob`: the
 * participant gate `(isGroup || isBroadcast) && author`, `context: "status"` when status stanzas are received);
 * never `inactive` for a status (its test `status_and_peer_receipts_ignore_inactive`).
 */
export async function sendStatusDeliveryReceipt (sock: WASocket, frame: BinaryNode): Promise<void> {
  const { id, participant, from } = frame.attrs
  // to the chat it came from: status@broadcast, or the group of a group status (DeliveryReceiptJob's `(isGroup || isBroadcast) && author` gate)
  await sock.sendNode({ tag: 'receipt', attrs: { id, to: from ?? STATUS_JID, ...(participant !== undefined ? { participant } : {}), context: 'status' } })
}

/**
 * The read (view) receipt for a contact's status, as WA Web's `SendReadReceiptJob` writes it: `<receipt
 * to="status@broadcast" type="read" id t participant context="status" [peer_participant_pn]>`, the PN only
 * for a LID author whose number is known (whatsapp-rust PR #744, commit 2413271c, `build_read_receipt_node`).
 */
export async function sendStatusReadReceipt (sock: WASocket, status: { messageId: string, participant: string, participantPn: string | null }): Promise<void> {
  const t = String(Math.floor(Date.now() / 1000))
  const pn: Record<string, string> = status.participant.endsWith('@lid') && status.participantPn !== null ? { peer_participant_pn: status.participantPn } : {}
  await sock.sendNode({
    tag: 'receipt',
    attrs: { to: STATUS_JID, type: 'read', id: status.messageId, t, participant: status.participant, context: 'status', ...pn }
  })
}

/** The media of a status message, as kept to download it later (no bytes; `mediaKey` base64). */
export interface StatusMediaRef { kind: 'image' | 'video' | 'audio' | 'document' | 'sticker', url: string | null, directPath: string | null, mediaKey: string, mimetype: string | null, size: number | null }

/** Streams the decrypted media through Baileys' download (public API); `host`: the media host to fetch from. */
export async function downloadStatusMedia (ref: StatusMediaRef, host: string | undefined): Promise<Readable> {
  return await downloadContentFromMessage(
    { mediaKey: Buffer.from(ref.mediaKey, 'base64'), directPath: ref.directPath ?? undefined, url: ref.url ?? undefined },
    ref.kind,
    host === undefined ? {} : { host }
  )
}
