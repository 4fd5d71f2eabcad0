import { createDecipheriv, hkdfSync } from 'node:crypto'
import { jidNormalizedUser, proto } from '@whiskeysockets/baileys'
import { STATUS_JID } from '../jid.js'

// An encrypted reaction (`encReactionMessage`) to one of the account's statuses. oxidezap/whatsapp-rust counts it
// as a status reaction beside `reactionMessage` (wacore/src/send/status.rs status_carries_privacy_meta, and
// wacore/src/send/classify.rs). Its plaintext is a ReactionMessage with only `text` and `senderTimestampMs`,
// AES-256-GCM under a key derived from the reacted message's `messageSecret` (wacore/src/reaction.rs,
// wacore/src/secret_enc_addon.rs, mirroring WA Web's WAWebReactionsEncryption): HKDF-SHA256, no salt,
// info = message id ‖ the message's sender ‖ the reactor ‖ "Enc Reaction", 32 bytes; empty AAD; the
// envelope names the message (`targetMessageKey`). Every status the service posts carries a messageSecret
// (session/status-message.ts), which it stores with the status: the reaction is read with it. A status the
// service did not post (e.g. one posted from the phone) has no secret here, and its encrypted reactions are not
// read (docs/platform.md).

const GCM_TAG = 16

/** The reacted status' id, when `message` is an encrypted reaction to a status@broadcast message. */
export function encReactionTarget (message: proto.IMessage): string | null {
  const key = message.encReactionMessage?.targetMessageKey
  if (key?.remoteJid !== STATUS_JID || typeof key.id !== 'string' || key.id === '') return null
  return key.id
}

function tryDecrypt (payload: Buffer, iv: Buffer, secret: Uint8Array, info: string): proto.Message.ReactionMessage | null {
  try {
    const key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), Buffer.from(info), 32))
    const decipher = createDecipheriv('aes-256-gcm', key, iv)
    decipher.setAuthTag(payload.subarray(payload.length - GCM_TAG))
    const plain = Buffer.concat([decipher.update(payload.subarray(0, payload.length - GCM_TAG)), decipher.final()])
    return proto.Message.ReactionMessage.decode(plain)
  } catch {
    return null
  }
}

/**
 * The emoji and time of an encrypted reaction, read with the status' `secret`; null when it does not decrypt.
 * The JIDs that enter the key are tried in the forms a client may use for each party (LID and phone number,
 * device dropped): the GCM tag tells the right one.
 */
export function readEncReaction (
  message: proto.IMessage, statusId: string, secret: Uint8Array, posters: string[], reactors: string[]
): { emoji: string, at: number | null } | null {
  const enc = message.encReactionMessage
  if (enc?.encPayload == null || enc.encIv == null || enc.encPayload.length <= GCM_TAG) return null
  const payload = Buffer.from(enc.encPayload)
  const iv = Buffer.from(enc.encIv)
  const norm = (jids: string[]): string[] => [...new Set(jids.filter((j) => j !== '').map((j) => jidNormalizedUser(j)))]
  for (const poster of norm(posters)) {
    for (const reactor of norm(reactors)) {
      const r = tryDecrypt(payload, iv, secret, `${statusId}${poster}${reactor}Enc Reaction`)
      if (r === null) continue
      const ms = Number(r.senderTimestampMs ?? 0)
      return { emoji: r.text ?? '', at: ms > 0 ? ms : null }
    }
  }
  return null
}
