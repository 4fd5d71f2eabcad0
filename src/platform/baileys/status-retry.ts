import {
  encodeSignedDeviceIdentity,
  encodeWAMessage,
  extractE2ESessionFromRetryReceipt,
  getBinaryNodeChild,
  isPnUser,
  jidDecode,
  normalizeMessageContent,
  type BinaryNode,
  type proto,
  type WASocket
} from '@whiskeysockets/baileys'
import type { PlatformLogger as Logger } from '../logger.js'
import { STATUS_JID } from '../../jid.js'
import { statusMediaType, statusStanzaType } from './status-shape.js'
import { forgetDevice, rememberDevices } from './status-key-memory.js'
import { ownLidOf } from './status-post.js'

// A recipient device that could not decrypt one of our statuses sends `<receipt type="retry">`; the server hands
// it to us as `<receipt from="status@broadcast" participant=DEVICE id=… type="retry"><retry count id t v/>
// <registration/>[<keys/>]</receipt>`. WA Web answers it (oxidezap/whatsapp-rust src/retry.rs
// handle_retry_receipt and retransmit_status_message, PR #559 "WA Web compliance: retry flow + group/status
// session rebuild", 2026-04-17, mirroring WAWebHandleRetryRequest and WAWebResendStatusMsg):
// - the requester is the receipt's `participant`; a phone-number requester is mapped to its LID device
//   (resolve_retransmission_encryption_jid: "WAWebResendStatusMsg explicitly falls back to the PN device when
//   no LID mapping is available");
// - a key bundle in the receipt is installed first (install_retry_key_bundle, WA Web runs it unconditionally);
// - the requester is marked as lacking the sender key (markForgetSenderKey), before the message is looked up,
//   so the next post distributes the key to it even when this one cannot be answered;
// - the status goes out again under its id TO status@broadcast, encrypted with the sender key, with a sender key
//   distribution message for exactly that device, no audience list and no <meta> (prepare_group_stanza with
//   distribution_targets = [requester], SenderKeyDistributionPolicy::Required, extra_nodes empty); once sent,
//   the device is recorded as holding the key again (update_sender_key_devices);
// - retries with count >= MAX_RETRY_COUNT (5, "matches WhatsApp Web's MAX_RETRY = 5", wacore/src/protocol/retry.rs)
//   are refused, and never to the sending device itself.
// rc14 instead re-relays the message pairwise to the requesting device's own JID (messages-recv.js
// sendMessagesAgain → relayMessage with `participant`) and clears sender-key memory only for groups (isJidGroup).
// Baileys internals: extractE2ESessionFromRetryReceipt and signalRepository.injectE2ESession
// (`retry-receipt-keys`), lidMapping.getLIDForPN (`lid-for-pn`), and the post path's (status-post.ts).

/** Retries of one message by one device answered at most this often: WA Web's MAX_RETRY (whatsapp-rust MAX_RETRY_COUNT). */
export const MAX_STATUS_RETRY_COUNT = 5

export interface StatusRetryRequest {
  /** the status's message id */
  messageId: string
  /** the device that asked, as the receipt named it (`participant`) */
  requester: string
  /** `<retry count>`: 1 for the device's first retry of this message */
  count: number
}

/** A retry receipt for one of our statuses, or null for anything else. */
export function statusRetryOf (frame: BinaryNode): StatusRetryRequest | null {
  if (frame.tag !== 'receipt' || frame.attrs.type !== 'retry' || frame.attrs.from !== STATUS_JID) return null
  const requester = frame.attrs.participant
  const retry = getBinaryNodeChild(frame, 'retry')
  const messageId = retry?.attrs.id ?? frame.attrs.id
  if (typeof requester !== 'string' || requester === '' || typeof messageId !== 'string' || messageId === '') return null
  const count = Number(retry?.attrs.count ?? 1)
  return { messageId, requester, count: Number.isInteger(count) && count >= 1 ? count : 1 }
}

/**
 * The device the answer is encrypted for and addressed to: a phone-number device mapped to its LID device
 * (the stored mapping, else a usync query), the phone-number device when there is none; a LID as it is.
 */
export async function statusRetryDevice (sock: WASocket, requester: string): Promise<string> {
  if (isPnUser(requester) !== true) return requester
  const lid = await sock.signalRepository.lidMapping.getLIDForPN(requester).catch(() => null)
  return typeof lid === 'string' && lid.endsWith('@lid') ? lid : requester
}

/** the requester is the device that posted (never answered: whatsapp-rust "cannot retransmit a status to the sending device itself") */
export function isSendingDevice (sock: WASocket, device: string): boolean {
  const d = jidDecode(device)
  return [ownLidOf(sock), sock.authState.creds.me?.id].some((own) => {
    const o = jidDecode(own ?? undefined)
    return o !== undefined && d !== undefined && o.user === d.user && (o.device ?? 0) === (d.device ?? 0)
  })
}

/**
 * Installs a key bundle the receipt carries (rc14 leaves `<keys>` out of a first retry, WA Web from the second:
 * whatsapp-rust MIN_RETRY_COUNT_FOR_KEYS) and marks the device as lacking the sender key. False when a bundle was
 * there but could not be installed (whatsapp-rust aborts the resend then).
 */
export async function prepareStatusRetry (sock: WASocket, device: string, receipt: BinaryNode, logger: Logger): Promise<boolean> {
  const bundle = extractE2ESessionFromRetryReceipt(receipt)
  let installed = true
  if (bundle !== null) {
    installed = await sock.signalRepository.injectE2ESession({ jid: device, session: bundle }).then(() => true, (err: unknown) => {
      logger.warn({ err, device }, 'the key bundle of a status retry receipt could not be installed')
      return false
    })
  }
  await forgetDevice(sock, device)
  return installed
}

export interface WrittenRetry {
  /** whether the answer carried a sender key distribution message for the device (always, when written) */
  skdm: boolean
  /** the platform accepted the answer: the device holds the key again (recorded durably) */
  accepted: () => Promise<void>
}

/**
 * Writes the status `message` again under `messageId` to status@broadcast, with a sender key distribution
 * message for `device` only (WA Web's answer to a status retry, see above). Throws when the device cannot be
 * given the key (no session can be set up): the answer would be useless to it.
 */
export async function writeStatusRetry (
  sock: WASocket, input: { message: proto.IMessage, messageId: string, device: string, logger: Logger }
): Promise<WrittenRetry> {
  const meLid = ownLidOf(sock)
  if (meLid === null) throw new Error('this account has no LID: its statuses go the phone-number way')
  const { message, messageId, device } = input
  return await sock.authState.keys.transaction(async () => {
    const content = normalizeMessageContent(message) ?? message
    const { ciphertext, senderKeyDistributionMessage } = await sock.signalRepository.encryptGroupMessage({
      group: STATUS_JID,
      data: encodeWAMessage(message),
      meId: meLid
    })
    await sock.assertSessions([device], false)
    const skdm = encodeWAMessage({ senderKeyDistributionMessage: { groupId: STATUS_JID, axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage } })
    const { type, ciphertext: enc } = await sock.signalRepository.encryptMessage({ jid: device, data: skdm })
    const mediatype = statusMediaType(content)
    const stanza: BinaryNode = {
      tag: 'message',
      attrs: { to: STATUS_JID, id: messageId, type: statusStanzaType(content) },
      content: [
        { tag: 'participants', attrs: {}, content: [{ tag: 'to', attrs: { jid: device }, content: [{ tag: 'enc', attrs: { v: '2', type }, content: enc }] }] },
        ...(type === 'pkmsg' ? [{ tag: 'device-identity', attrs: {}, content: encodeSignedDeviceIdentity(sock.authState.creds.account!, true) }] : []),
        { tag: 'enc', attrs: { v: '2', type: 'skmsg', ...(mediatype !== undefined ? { mediatype } : {}) }, content: ciphertext }
      ]
    }
    await sock.sendNode(stanza)
    input.logger.debug({ messageId, device, type }, 'status sent again to a device that asked for it')
    return { skdm: true, accepted: async () => { await rememberDevices(sock, [device]) } }
  }, STATUS_JID)
}
