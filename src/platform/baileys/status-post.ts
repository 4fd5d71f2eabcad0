import {
  encodeSignedDeviceIdentity,
  encodeWAMessage,
  isHostedLidUser,
  isHostedPnUser,
  jidDecode,
  jidNormalizedUser,
  normalizeMessageContent,
  type BinaryNode,
  type proto,
  type WASocket
} from '@whiskeysockets/baileys'
import type { PlatformLogger as Logger } from '../logger.js'
import type { StatusSetting } from '../types.js'
import { STATUS_JID } from '../../jid.js'
import { statusMediaType, statusStanzaType } from './status-shape.js'
import { mentionedUsersContent } from './status-mention.js'
import { holdsKey, isOwnDevice, loadKeyMemory, rememberDevices, rotateStatusSenderKey } from './status-key-memory.js'

// A status post from an LID-migrated account, shaped the way WhatsApp Web posts one today (documented from
// WA Web by oxidezap/whatsapp-rust: src/send/mod.rs send_status_message, wacore/src/send/status.rs,
// tests/e2e/tests/status.rs; PRs #568, #569, #925). Baileys rc14's relayMessage posts the older shape that
// the server NACKs with 479 for such accounts (WhiskeySockets/Baileys #2794): phone-number participants,
// SKDM to every device on every post, no audience list, no <meta status_setting>. So the stanza is built
// here from Baileys' parts (usync device query, Signal sessions, sender key) and written with sendNode:
//
//   <message to="status@broadcast" id type="text|media">          (no addressing_mode: NACKed 479)
//     <participants>
//       <to jid="DEVICE@lid"><enc v="2" type="pkmsg|msg">SKDM</enc></to>   only devices lacking the key
//       <to jid="USER@lid"/>                                               every audience user of the chunk
//     </participants>
//     <device-identity/>                                                  when any SKDM is a pkmsg
//     <enc v="2" type="skmsg" mediatype?>the status</enc>
//     <meta status_setting="contacts|allowlist|denylist"/>                posts only, never a revoke
//       (<mentioned_users><to jid="USER@lid"/>…</mentioned_users> inside it when the post mentions: status-mention.ts)
//   </message>
//
// Baileys internals relied on, each checked at start (assumptions-status.ts): sock.getUSyncDevices
// (`usync-devices-lid`), sock.assertSessions (`assert-sessions`), sock.sendNode (`send-node`),
// sock.authState.keys (`socket-key-store`, `sender-key-types`), creds.me.lid / .account (`own-lid-account`),
// signalRepository.encryptGroupMessage / encryptMessage (`signal-encrypt`), lidMapping.getLIDsForPNs
// (`lid-lookup`), encodeWAMessage / encodeSignedDeviceIdentity (`message-encoders`); an error ack reaches
// the sender as messages.update (`error-ack-update`).

/**
 * `<meta status_setting>` describes the poster's status privacy for this post (whatsapp-rust
 * src/send/mod.rs send_status_message: "`<meta status_setting>` describes the POSTER's privacy on their own
 * status"; the values and their meaning: src/features/status.rs StatusPrivacySetting: `contacts` "send to
 * all contacts in address book", `allowlist` "send only to contacts in an allow list", `denylist` "send to
 * all contacts except those in a deny list"). The caller says which its audience is (plugins/audiences);
 * an explicit list of recipients is an allow list, the default.
 */
export const STATUS_SETTING: StatusSetting = 'allowlist'

/** LIDs are looked up this many numbers per usync query (whatsmeow PR #947: up to 500 per request). */
const LID_LOOKUP_BATCH = 500

/** The own LID (`<user>:<device>@lid`) of an LID-migrated account, null for a legacy (PN-only) account. */
export function ownLidOf (sock: WASocket): string | null {
  const lid = sock.authState.creds.me?.lid
  return typeof lid === 'string' && lid.endsWith('@lid') ? lid : null
}

/**
 * Maps phone-number user JIDs to LID user JIDs: the stored LID mapping first, a usync `<lid/>` query for
 * the rest (Baileys' LIDMappingStore.getLIDsForPNs, which stores what it learns). Numbers without a LID are
 * missing from the answer.
 */
export async function lidsForNumbers (sock: WASocket, pnJids: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  for (let i = 0; i < pnJids.length; i += LID_LOOKUP_BATCH) {
    const batch = pnJids.slice(i, i + LID_LOOKUP_BATCH)
    const pairs = await sock.signalRepository.lidMapping.getLIDsForPNs(batch) ?? []
    for (const { pn, lid } of pairs) {
      if (typeof lid === 'string' && lid.endsWith('@lid')) out.set(jidNormalizedUser(pn), jidNormalizedUser(lid))
    }
  }
  return out
}

export interface StatusChunk {
  message: proto.IMessage
  messageId: string
  /** LID user JIDs of this chunk's audience (the own LID user in the first chunk) */
  users: string[]
  /** a post carries <meta status_setting> with this value; a revoke (null) carries none */
  statusSetting: StatusSetting | null
  /** LID user JIDs the post mentions (at most 5): `<meta><mentioned_users>` (status-mention.ts) */
  mentioned?: string[]
  /** STATUS_STANZA: `<message>` (default) or WA Web's newer `<status>` publish stanza, same children (docs/platform.md) */
  stanza?: 'message' | 'status'
  logger: Logger
}

export interface WrittenChunk {
  /** devices the chunk carried a sender key distribution message to */
  skdmDevices: string[]
  /** the platform accepted the chunk: those devices hold the key now (remembered durably) */
  accepted: () => Promise<void>
}

interface Device { jid: string, user: string, device: number }

/** The chunk's devices that may get an SKDM: no hosted devices, not the exact sending device. */
function targetDevices (devices: Array<{ jid: string, user: string, device?: number }>, meLid: string): Device[] {
  const me = jidDecode(meLid)
  const seen = new Set<string>()
  const out: Device[] = []
  for (const d of devices) {
    const device = d.device ?? 0
    if (isHostedLidUser(d.jid) === true || isHostedPnUser(d.jid) === true || device === 99) continue
    if (d.user === me?.user && device === (me.device ?? 0)) continue
    if (seen.has(d.jid)) continue
    seen.add(d.jid)
    out.push({ jid: d.jid, user: d.user, device })
  }
  return out
}

/**
 * Builds and writes one chunk of a status post (or revoke) from an LID-migrated account; resolves once
 * written (the caller waits for the platform's ack, then calls `accepted`).
 */
export async function writeLidStatusChunk (sock: WASocket, chunk: StatusChunk): Promise<WrittenChunk> {
  const meLid = ownLidOf(sock)
  if (meLid === null) throw new Error('this account has no LID: a status goes the phone-number way')
  const users = [...new Set(chunk.users.map((u) => jidNormalizedUser(u)))]
  const keys = sock.authState.keys
  return await keys.transaction(async () => {
    const devices = targetDevices(await sock.getUSyncDevices(users, true, false), meLid)
    let memory = await loadKeyMemory(sock)
    // a device that held the key is gone: rotate, so it cannot read later posts (its user's new devices,
    // and everyone else, get the new key)
    const current = new Set(devices.map((d) => d.jid))
    const chunkUsers = new Set(users.map((u) => jidDecode(u)?.user))
    const gone = Object.keys(memory).filter((jid) => memory[jid] && chunkUsers.has(jidDecode(jid)?.user) && !current.has(jid))
    if (gone.length > 0) {
      chunk.logger.info({ devices: gone.length }, 'a recipient device that held the status sender key is gone; rotating the key')
      await rotateStatusSenderKey(sock, meLid)
      memory = {}
    }
    const content = normalizeMessageContent(chunk.message) ?? chunk.message
    const { ciphertext, senderKeyDistributionMessage } = await sock.signalRepository.encryptGroupMessage({
      group: STATUS_JID,
      data: encodeWAMessage(chunk.message),
      meId: meLid
    })
    // the poster's own devices get it on every post; any other device unless it and its primary hold it
    // (whatsapp-rust #999 and #872: status-key-memory.ts)
    const me = sock.authState.creds.me
    const lacking = devices.filter((d) => isOwnDevice(d.jid, meLid, me?.id) || !holdsKey(memory, d.jid)).map((d) => d.jid)
    const skdmNodes: BinaryNode[] = []
    let pkmsg = false
    if (lacking.length > 0) {
      await sock.assertSessions(lacking)
      const skdm = encodeWAMessage({ senderKeyDistributionMessage: { groupId: STATUS_JID, axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage } })
      const nodes = await Promise.all(lacking.map(async (jid): Promise<BinaryNode | null> => {
        try {
          const { type, ciphertext: enc } = await sock.signalRepository.encryptMessage({ jid, data: skdm })
          if (type === 'pkmsg') pkmsg = true
          return { tag: 'to', attrs: { jid }, content: [{ tag: 'enc', attrs: { v: '2', type }, content: enc }] }
        } catch (err) {
          chunk.logger.warn({ err, jid }, 'could not encrypt the status sender key for a device; it is left out')
          return null
        }
      }))
      for (const node of nodes) if (node !== null) skdmNodes.push(node)
      if (skdmNodes.length === 0) throw new Error('encrypting the status sender key failed for every device')
    }
    const skdmDevices = skdmNodes.map((n) => n.attrs.jid)
    const mediatype = statusMediaType(content)
    const stanza: BinaryNode = {
      // `<status>`: WA Web's WAWebEncryptAndSendStatusMsg maybeApplyStatusTag retags this very stanza (acked class="status")
      tag: chunk.stanza ?? 'message',
      attrs: { to: STATUS_JID, id: chunk.messageId, type: statusStanzaType(content) },
      content: [
        { tag: 'participants', attrs: {}, content: [...skdmNodes, ...users.map((jid): BinaryNode => ({ tag: 'to', attrs: { jid } }))] },
        ...(pkmsg ? [{ tag: 'device-identity', attrs: {}, content: encodeSignedDeviceIdentity(sock.authState.creds.account!, true) }] : []),
        { tag: 'enc', attrs: { v: '2', type: 'skmsg', ...(mediatype !== undefined ? { mediatype } : {}) }, content: ciphertext },
        ...(chunk.statusSetting !== null ? [{ tag: 'meta', attrs: { status_setting: chunk.statusSetting }, ...mentionedUsersContent(chunk.mentioned) }] : [])
      ]
    }
    await sock.sendNode(stanza)
    chunk.logger.debug({ messageId: chunk.messageId, users: users.length, skdm: skdmDevices.length }, 'status chunk written')
    return { skdmDevices, accepted: async () => { await rememberDevices(sock, skdmDevices) } }
  }, STATUS_JID)
}
