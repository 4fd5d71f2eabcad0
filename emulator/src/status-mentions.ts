/**
 * Status mentions (issue 39): what the server reads of a status post that names up to five users, and what
 * the mentioned users' devices receive.
 *
 * Sources (each rule below cites the one it follows):
 * - WA Web's status publish schema, `WASmaxOutStatusPublishStatusEncMentionedUsersMixin` (builds after
 *   2026-08-12): `<meta><mentioned_users>` holds `REPEATED_CHILD(<to jid/>, 1, 5)`, one to five users; the
 *   deliver side parses the same bounds (`WASmaxInStatusDeliverStatusEncMentionedUsersMixin`:
 *   `mapChildrenWithTag(mentioned_users, "to", 1, 5)`, each `jid` a LID user or group JID, optional `peer_pn_jid`).
 *   A list outside those bounds is not a stanza of the schema: refused 479 (SmaxInvalid, "a stanza field has an
 *   incorrect format", as every rule of status-rules.ts).
 * - The mentioned user is told by a one-to-one message in the chat with the poster: WA Web renders it as a
 *   `protocol` message of subtype `status_mention_message` whose quoted stanza id is the status
 *   (`WAWebStatusMentionRenderMsg.react`, `WAWebStatusMentionFormatMsgText`); on the wire it is
 *   `Message.statusMentionMessage` (a FutureProofMessage, field 87 of rc14's WAProto.proto) around a
 *   `protocolMessage { key: <the status' key>, type: STATUS_MENTION_MESSAGE (25) }` (tulir/whatsmeow msgconv
 *   test "status mention": `StatusMentionMessage: &waE2E.FutureProofMessage{…}` → "Mentioned you in their
 *   status"), its stanza marked `<meta is_status_mention="true">` (`WASmaxOutStatusPublishStatusEncMentionMessageMixin`).
 *   The emulator decrypts every one-to-one message an account sends to a contact's devices and keeps it
 *   (`DirectInbox`), so a test reads what each mentioned device decrypted.
 */
import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, proto, type BinaryNode } from '@whiskeysockets/baileys'
import type { Account, Directory } from './accounts.js'
import { signalNameOf } from './accounts.js'
import { signalSenderFor } from './signal-party.js'

/** At most five users a status names (WASmaxOutStatusPublishStatusEncMentionedUsersMixin: REPEATED_CHILD 1..5). */
export const MAX_MENTIONED_USERS = 5

/** The `<to jid>`s of a stanza's `<meta><mentioned_users>`; undefined when it has no such element. */
export function mentionedUsersOf (node: BinaryNode): string[] | undefined {
  for (const meta of getBinaryNodeChildren(node, 'meta')) {
    const list = getBinaryNodeChild(meta, 'mentioned_users')
    if (list) return getBinaryNodeChildren(list, 'to').map((to) => to.attrs.jid ?? '')
  }
  return undefined
}

/** The mention rule of a status post (see the sources above); undefined when it holds or the post names nobody. */
export function mentionRuleBroken (mentioned: string[] | undefined, poster: Account): { rule: 'mentioned-users', detail: string } | undefined {
  if (mentioned === undefined) return undefined
  if (mentioned.length < 1 || mentioned.length > MAX_MENTIONED_USERS) {
    return { rule: 'mentioned-users', detail: `<mentioned_users> with ${mentioned.length} <to> (the schema takes 1 to ${MAX_MENTIONED_USERS})` }
  }
  for (const jid of mentioned) {
    const decoded = jidDecode(jid)
    // a LID-migrated account names users by LID (the deliver schema's GROUPJID_LIDUSERJID; whatsapp-rust PR #568:
    // status is LID-addressed); a legacy account by phone number; never a device
    const servers = poster.legacy ? ['s.whatsapp.net', 'lid'] : ['lid']
    if (!decoded || decoded.device !== undefined || !servers.includes(decoded.server)) {
      return { rule: 'mentioned-users', detail: `<mentioned_users><to jid="${jid}"> is not a ${poster.legacy ? 'user' : 'LID user'} JID` }
    }
  }
  return undefined
}

/** One one-to-one message an account sent, as one of a contact's devices decrypted it. */
export interface DirectMessageRecord {
  /** the stanza id */
  id: string
  at: string
  /** the sending account's number and device */
  from: string
  fromDevice: number
  /** the contact's number, and the device jid as addressed */
  to: string
  jid: string
  device: number
  encType: string
  decrypted: boolean
  error?: string
  /** the `<meta>` attributes of the stanza (`is_status_mention`…) */
  meta: Record<string, string>
  /** the decrypted message (proto JSON) */
  message?: Record<string, unknown>
  /** a status mention notice: the status it names (`protocolMessage.key`) */
  statusMention?: { statusId: string, remoteJid: string | null, fromMe: boolean | null, type: number | null }
}

/** What a decrypted message says of a status mention (see the sources above); undefined when it is none. */
export function statusMentionOf (message: proto.IMessage): DirectMessageRecord['statusMention'] {
  const inner = message.statusMentionMessage?.message?.protocolMessage
  if (!inner?.key?.id) return undefined
  return { statusId: inner.key.id, remoteJid: inner.key.remoteJid ?? null, fromMe: inner.key.fromMe ?? null, type: inner.type ?? null }
}

/** Decrypts the one-to-one messages accounts send to contacts' devices, and keeps them per contact. */
export class DirectInbox {
  private readonly byContact = new Map<string, DirectMessageRecord[]>()

  constructor (private readonly directory: Directory) {}

  /** A `<message to=…>` from `account`'s device: each `<to>` of a contact's device is decrypted by that device. */
  async take (account: Account, deviceId: number, node: BinaryNode): Promise<number> {
    const meta: Record<string, string> = {}
    for (const m of getBinaryNodeChildren(node, 'meta')) Object.assign(meta, m.attrs)
    const targets = getBinaryNodeChildren(getBinaryNodeChild(node, 'participants'), 'to')
    const name = signalNameOf(account)
    const sender = signalSenderFor(name.user, name.server, deviceId)
    let taken = 0
    for (const to of targets) {
      const decoded = jidDecode(to.attrs.jid)
      const enc = getBinaryNodeChild(to, 'enc')
      if (!decoded || !enc) continue
      const resolved = this.directory.resolveDevice(decoded.user, decoded.server, decoded.device ?? 0)
      if (resolved?.party.kind !== 'contact' || !resolved.simulated) continue
      const type = enc.attrs.type
      const record: DirectMessageRecord = {
        id: node.attrs.id, at: new Date().toISOString(), from: account.number, fromDevice: deviceId,
        to: resolved.party.number, jid: to.attrs.jid, device: resolved.deviceId, encType: type, decrypted: false, meta
      }
      if ((type === 'pkmsg' || type === 'msg') && enc.content instanceof Uint8Array) {
        try {
          const message = await resolved.simulated.decrypt(sender, type, enc.content)
          record.decrypted = true
          record.message = proto.Message.toObject(message, { longs: Number, bytes: String, defaults: false }) as Record<string, unknown>
          const mention = statusMentionOf(message)
          if (mention) record.statusMention = mention
        } catch (error) {
          record.error = `decrypt failed: ${(error as Error).message}`
        }
      } else {
        record.error = `unexpected <enc type="${type}">`
      }
      const list = this.byContact.get(resolved.party.number) ?? []
      list.push(record)
      if (list.length > 1000) list.shift()
      this.byContact.set(resolved.party.number, list)
      taken++
    }
    return taken
  }

  /** What the contact's devices decrypted, oldest first. */
  list (number: string): DirectMessageRecord[] {
    return (this.byContact.get(number) ?? []).map((r) => ({ ...r, meta: { ...r.meta } }))
  }
}
