import {
  encodeSignedDeviceIdentity,
  encodeWAMessage,
  isHostedLidUser,
  isHostedPnUser,
  jidDecode,
  jidNormalizedUser,
  type BinaryNode,
  type proto,
  type WASocket
} from '@whiskeysockets/baileys'
import { STATUS_JID } from '../../jid.js'

// The account's like of a contact's status, shaped as WA Web sends it (issue 39): an E2EE reaction message to
// status@broadcast, encrypted pairwise for each of the poster's devices, never under the status sender key and
// never with `<meta status_setting>`:
//
//   <message to="status@broadcast" id type="reaction">
//     <participants>
//       <to jid="POSTER:DEVICE@lid"><enc v="2" type="pkmsg|msg" decrypt-fail="hide">ReactionMessage</enc></to> …
//     </participants>
//     <device-identity/>                                   when any <enc> is a pkmsg
//   </message>
//
// Sources: oxidezap/whatsapp-rust PR #563 (2026-04-18, "status reactions via send_message with correct E2EE
// wire format": WA Web's WAWebSendReactionMsgAction encrypts the ReactionMessage like a DM reaction, and
// `src/send/mod.rs` sends it through the DM branch to the author's devices with `is_status_addon`, the outer
// `to` rewritten to status@broadcast "mirrors incoming `from`"); PR #569 (2026-04-18: a reaction carrying
// `<meta status_setting>` is NACKed 479 SmaxInvalid; WA Web's reaction path "never attaches the meta"); the
// removal is the same reaction with empty text (whatsapp-rust wacore/src/reaction.rs "An empty `text` is the
// reaction-removal form"). `decrypt-fail="hide"` as rc14's relayMessage sets it on reactions. Baileys rc14's
// relayMessage cannot send it: a status@broadcast message goes its sender-key (skmsg) branch, the form #569
// saw refused. The account's own other devices get the DeviceSentMessage copy WA Web's DM fan-out gives them.
//
// Baileys internals relied on (checked at start, assumptions-status.ts): sock.getUSyncDevices, assertSessions,
// signalRepository.encryptMessage, sendNode, encodeWAMessage / encodeSignedDeviceIdentity, creds.me / account.

export interface StatusReactionInput {
  /** the reaction's own message id */
  messageId: string
  /** the status' id */
  statusId: string
  /** the poster as the status named them (`<lid>@lid` or `<number>@s.whatsapp.net`): the reaction key's participant */
  poster: string
  /** the emoji; empty takes the like back */
  emoji: string
  /** ms since epoch */
  at: number
}

/** The reaction message naming the status (`key.remoteJid` status@broadcast, `id` the status, `participant` the poster). */
export function statusReaction (input: StatusReactionInput): proto.IMessage {
  return {
    reactionMessage: {
      key: { remoteJid: STATUS_JID, id: input.statusId, fromMe: false, participant: input.poster },
      text: input.emoji,
      senderTimestampMs: input.at
    }
  }
}

/** The devices a reaction goes to: the poster's, and the account's own others; no hosted devices, never the sending device itself. */
function fanOut (
  sock: WASocket, devices: Array<{ jid: string, user: string, device?: number }>, posterUser: string | undefined
): { poster: string[], own: string[] } {
  const me = sock.authState.creds.me
  const sender = new Set([me?.id, me?.lid].filter((j): j is string => typeof j === 'string'))
  const ownUsers = new Set([...sender].map((j) => jidDecode(j)?.user))
  const poster = new Set<string>()
  const own = new Set<string>()
  for (const d of devices) {
    if (isHostedLidUser(d.jid) === true || isHostedPnUser(d.jid) === true || (d.device ?? 0) === 99 || sender.has(d.jid)) continue
    if (d.user === posterUser) poster.add(d.jid)
    else if (ownUsers.has(d.user)) own.add(d.jid)
  }
  return { poster: [...poster], own: [...own] }
}

/** The account's own user JID in the poster's addressing (LID for a LID poster when the account has one). */
function ownUserFor (sock: WASocket, poster: string): string | null {
  const me = sock.authState.creds.me
  const lid = typeof me?.lid === 'string' ? jidNormalizedUser(me.lid) : null
  const pn = typeof me?.id === 'string' ? jidNormalizedUser(me.id) : null
  return poster.endsWith('@lid') ? lid ?? pn : pn
}

/**
 * Builds and writes the reaction stanza; resolves once written (the caller waits for the ack). The poster's
 * devices get the reaction, the account's other devices (its phone) a DeviceSentMessage naming the poster, as in
 * WA Web's DM fan-out (whatsapp-rust wacore/src/send/dm.rs prepare_dm_stanza: own other devices get the
 * DeviceSentMessage plaintext, `destination_jid` the chat). Returns the poster's devices it went to.
 */
export async function writeStatusReaction (sock: WASocket, input: StatusReactionInput): Promise<string[]> {
  const poster = jidNormalizedUser(input.poster)
  const posterUser = jidDecode(poster)?.user
  const message = statusReaction(input)
  const data = encodeWAMessage(message)
  const ownUser = ownUserFor(sock, poster)
  return await sock.authState.keys.transaction(async () => {
    const devices = fanOut(sock, await sock.getUSyncDevices(ownUser === null ? [poster] : [poster, ownUser], true, false), posterUser)
    if (devices.poster.length === 0) throw new Error('the poster has no device to send the like to')
    await sock.assertSessions([...devices.poster, ...devices.own])
    const dsm = devices.own.length === 0 ? null : encodeWAMessage({ deviceSentMessage: { destinationJid: poster, message } })
    let pkmsg = false
    const nodes: BinaryNode[] = []
    for (const [jid, plain] of [...devices.poster.map((j) => [j, data] as const), ...devices.own.map((j) => [j, dsm!] as const)]) {
      const { type, ciphertext } = await sock.signalRepository.encryptMessage({ jid, data: plain })
      if (type === 'pkmsg') pkmsg = true
      nodes.push({ tag: 'to', attrs: { jid }, content: [{ tag: 'enc', attrs: { v: '2', type, 'decrypt-fail': 'hide' }, content: ciphertext }] })
    }
    const stanza: BinaryNode = {
      tag: 'message',
      attrs: { to: STATUS_JID, id: input.messageId, type: 'reaction' },
      content: [
        { tag: 'participants', attrs: {}, content: nodes },
        ...(pkmsg ? [{ tag: 'device-identity', attrs: {}, content: encodeSignedDeviceIdentity(sock.authState.creds.account!, true) }] : [])
      ]
    }
    await sock.sendNode(stanza)
    return devices.poster
  }, STATUS_JID)
}

/** What a reply quotes: the status as it was read (its text, or its media with caption); null when it was not read. */
export interface QuotedStatus {
  type: string
  text: string | null
  caption: string | null
  /** the stored media reference (JSON: kind, url, directPath, mediaKey base64, mimetype, size) */
  mediaRef: string | null
}

function quotedMessage (q: QuotedStatus): proto.IMessage | undefined {
  if (q.type === 'text') return { extendedTextMessage: { text: q.text ?? '' } }
  if (q.type !== 'image' && q.type !== 'video' && q.type !== 'audio') return undefined
  type Ref = { url: string | null, directPath: string | null, mediaKey: string, mimetype: string | null, size: number | null }
  const ref = q.mediaRef === null ? null : JSON.parse(q.mediaRef) as Ref
  const media = {
    ...(ref?.url != null ? { url: ref.url } : {}),
    ...(ref?.directPath != null ? { directPath: ref.directPath } : {}),
    ...(ref !== null ? { mediaKey: Buffer.from(ref.mediaKey, 'base64') } : {}),
    ...(ref?.mimetype != null ? { mimetype: ref.mimetype } : {}),
    ...(ref?.size != null ? { fileLength: ref.size } : {})
  }
  if (q.type === 'image') return { imageMessage: { ...media, ...(q.caption !== null ? { caption: q.caption } : {}) } }
  if (q.type === 'video') return { videoMessage: { ...media, ...(q.caption !== null ? { caption: q.caption } : {}) } }
  return { audioMessage: media }
}

/**
 * A reply to a contact's status: an ordinary 1:1 text message whose contextInfo quotes the status (`stanzaId`
 * the status id, `participant` the poster, `remoteJid` status@broadcast, `quotedMessage` the status as read).
 * The shape of the replies the service reads from contacts (interactions.ts), and Baileys' own quoting
 * (rc14 Utils/messages.js generateWAMessageFromContent: `stanzaId`, `participant`, `quotedMessage`, and
 * `remoteJid` when the quoted chat is not the recipient's).
 */
export function statusReply (statusId: string, poster: string, text: string, quoted: QuotedStatus): proto.IMessage {
  const quotedMsg = quotedMessage(quoted)
  return {
    extendedTextMessage: {
      text,
      contextInfo: { stanzaId: statusId, participant: poster, remoteJid: STATUS_JID, ...(quotedMsg !== undefined ? { quotedMessage: quotedMsg } : {}) }
    }
  }
}

/** Writes the reply through Baileys' own 1:1 relay (to the poster's devices and the account's other devices). */
export async function writeStatusReply (sock: WASocket, to: string, messageId: string, message: proto.IMessage): Promise<void> {
  await sock.relayMessage(jidNormalizedUser(to), message, { messageId })
}
