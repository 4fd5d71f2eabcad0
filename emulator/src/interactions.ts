/**
 * A contact reacting to or replying to a status: the message its phone sends 1:1 to the poster, one
 * Signal-encrypted `<message>` per linked device of the poster's account, in the platform's shapes
 * (Baileys: `messages.js` reactions, `process-message.js`; whatsapp-rust's notes on status reactions):
 *
 * - a like / emoji reaction is a `reactionMessage` whose key points at the status
 *   (`remoteJid: status@broadcast`, `id`: the status id, `participant`: the poster), `text` the emoji
 *   (empty: the reaction is taken back), `senderTimestampMs`; stanza `type="reaction"`;
 * - a reply is an `extendedTextMessage` whose `contextInfo` quotes the status (`remoteJid:
 *   status@broadcast`, `stanzaId`: the status id, `participant`: the poster, `quotedMessage`); `type="text"`.
 *
 * Two forms of WA Web's newer likes, on request (issue 39):
 * - `form: 'status'`: the E2EE status like as WA Web sends it now, delivered `from="status@broadcast"` with the
 *   liker as `participant` (oxidezap/whatsapp-rust PR #563, 2026-04-18: the status reaction's outer `to` is
 *   status@broadcast, which "mirrors incoming `from`"; its retries "arrive with `from=status@broadcast`");
 * - `encrypted: true`: an `encReactionMessage` (whatsapp-rust counts it as a status reaction:
 *   wacore/src/send/status.rs), its ReactionMessage { text, senderTimestampMs } sealed with AES-256-GCM under
 *   HKDF-SHA256(the status' messageSecret, info = status id ‖ poster ‖ reactor ‖ "Enc Reaction"), empty AAD
 *   (wacore/src/reaction.rs, wacore/src/secret_enc_addon.rs).
 */
import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { encodeWAMessage, jidEncode, proto, type BinaryNode } from '@whiskeysockets/baileys'
import type { Account, Contact, Directory } from './accounts.js'
import { normalizeNumber, signalNameOf } from './accounts.js'
import { EmulatorError } from './errors.js'
import { phoneMessageId } from './phone.js'
import { signalSenderFor, type SignalBundle, type SimulatedDevice } from './signal-party.js'
import type { ReceiptVia, StatusRecord } from './types.js'
import type { InteractionOptions } from './types-messages.js'

const STATUS_JID = 'status@broadcast'

export type InteractionKind = 'reaction' | 'reply'

/** What to send, checked: who (contact and device), as which JID, and the message itself. */
export interface PreparedInteraction {
  poster: Account
  contact: Contact
  device: SimulatedDevice
  via: ReceiptVia
  messageId: string
  stanzaType: 'reaction' | 'text'
  message: proto.IMessage
  /** delivered from status@broadcast with the contact as participant (WA Web's E2EE status like) */
  viaStatus: boolean
}

/** An encReactionMessage (see above) to `key`'s status. */
function encryptedReaction (key: proto.IMessageKey, emoji: string, secret: Buffer, poster: string, reactor: string): proto.IMessage {
  const plain = proto.Message.ReactionMessage.encode({ text: emoji, senderTimestampMs: Date.now() }).finish()
  const aesKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), Buffer.from(`${key.id ?? ''}${poster}${reactor}Enc Reaction`), 32))
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', aesKey, iv)
  const payload = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()])
  return { encReactionMessage: { targetMessageKey: key, encPayload: payload, encIv: iv } }
}

function quotedStatus (status: StatusRecord): proto.IMessage {
  if (status.type === 'image') return { imageMessage: { caption: status.caption ?? '' } }
  if (status.type === 'video') return { videoMessage: { caption: status.caption ?? '' } }
  return { extendedTextMessage: { text: status.text ?? '' } }
}

/** Validates the options and builds the message (not encrypted yet). */
export function prepareInteraction (
  directory: Directory, status: StatusRecord, kind: InteractionKind, options: InteractionOptions, secret?: Buffer
): PreparedInteraction {
  if (options === null || typeof options !== 'object') throw new EmulatorError(400, 'a JSON body is required')
  const number = normalizeNumber(options.from)
  const party = directory.getByNumber(number)
  if (!party || party.kind !== 'contact') throw new EmulatorError(404, `unknown contact ${number}`)
  const via = options.via ?? 'pn'
  if (via !== 'pn' && via !== 'lid') throw new EmulatorError(400, 'via must be pn or lid')
  const deviceId = options.device ?? 0
  const device = party.devices.find((d) => d.deviceId === deviceId)
  if (!device) throw new EmulatorError(400, `contact ${number} has no device ${String(deviceId)}`)
  if (options.force !== true) {
    if (!status.recipients.includes(number)) throw new EmulatorError(400, `${number} did not receive status ${status.id}`)
    if (status.revoked === true) throw new EmulatorError(409, `status ${status.id} was revoked`)
  }
  const poster = directory.account(status.from)
  const posterJid = via === 'lid' ? `${poster.lid}@lid` : `${poster.number}@s.whatsapp.net`
  let message: proto.IMessage
  if (kind === 'reaction') {
    if (typeof options.emoji !== 'string') throw new EmulatorError(400, 'emoji (string; empty removes the reaction) is required')
    const key = { remoteJid: STATUS_JID, id: status.id, fromMe: false, participant: posterJid }
    if (options.encrypted === true) {
      if (secret === undefined) throw new EmulatorError(409, `status ${status.id} carried no messageSecret: no encrypted reaction can be made to it`)
      const reactor = via === 'lid' ? `${party.lid}@lid` : `${party.number}@s.whatsapp.net`
      message = encryptedReaction(key, options.emoji, secret, posterJid, reactor)
    } else {
      message = { reactionMessage: { key, text: options.emoji, senderTimestampMs: Date.now() } }
    }
  } else {
    if (typeof options.text !== 'string' || options.text === '') throw new EmulatorError(400, 'text (string) is required')
    message = {
      extendedTextMessage: {
        text: options.text,
        contextInfo: { stanzaId: status.id, participant: posterJid, remoteJid: STATUS_JID, quotedMessage: quotedStatus(status) }
      }
    }
  }
  const form = options.form ?? 'direct'
  if (form !== 'direct' && form !== 'status') throw new EmulatorError(400, 'form must be direct or status')
  if (form === 'status' && kind !== 'reaction') throw new EmulatorError(400, 'only a reaction comes from status@broadcast')
  if (options.encrypted !== undefined && (typeof options.encrypted !== 'boolean' || kind !== 'reaction')) throw new EmulatorError(400, 'encrypted (boolean) is for reactions')
  return { poster, contact: party, device, via, messageId: phoneMessageId(), stanzaType: kind === 'reaction' ? 'reaction' : 'text', message, viaStatus: form === 'status' }
}

/** Encryption goes one message at a time: two at once through one session would both use its next key. */
let chain: Promise<unknown> = Promise.resolve()

/**
 * The `<message>` for each of the poster's linked devices (`deviceId`), encrypted through the contact
 * device's session with it (started from the device's uploaded bundle when there is none yet).
 */
export async function encryptInteraction (
  prepared: PreparedInteraction,
  targets: Array<{ deviceId: number, bundle: () => SignalBundle | undefined }>,
  t: string
): Promise<Array<{ deviceId: number, node: BinaryNode }>> {
  const { poster, contact, device, via, messageId, stanzaType, message, viaStatus } = prepared
  const from = via === 'lid' ? jidEncode(contact.lid, 'lid', device.deviceId) : jidEncode(contact.number, 's.whatsapp.net', device.deviceId)
  const padded = encodeWAMessage(message)
  const run = chain.then(async () => {
    const out: Array<{ deviceId: number, node: BinaryNode }> = []
    for (const target of targets) {
      // the address the statuses it received came from (statuses.ts decrypts them as the account's LID)
      const name = signalNameOf(poster)
      const enc = await device.encrypt(signalSenderFor(name.user, name.server, target.deviceId), target.bundle, padded)
      out.push({
        deviceId: target.deviceId,
        node: {
          tag: 'message',
          attrs: viaStatus
            ? { id: messageId, from: STATUS_JID, participant: from, type: stanzaType, t, notify: contact.number }
            : { id: messageId, from, type: stanzaType, t, notify: contact.number },
          content: [{ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.body }]
        }
      })
    }
    return out
  })
  chain = run.catch(() => undefined)
  return await run
}
