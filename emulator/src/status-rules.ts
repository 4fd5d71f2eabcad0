/**
 * The rules the server applies today to a `<message to="status@broadcast">` (a status post, or a
 * revoke / reaction sent through the status broadcast), each with its public source. A stanza that
 * breaks one is answered `<ack class="message" from="status@broadcast" id=… error="479"/>` (479 =
 * SmaxInvalid, "a stanza field has an incorrect format": oxidezap/whatsapp-rust src/client/node_io.rs)
 * and goes nowhere, as WhiskeySockets/Baileys #2794 describes it (shown neither on the poster's own
 * devices nor to recipients). See "Rules the emulator enforces" in emulator/README.md.
 */
import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, proto, type BinaryNode } from '@whiskeysockets/baileys'
import type { Account } from './accounts.js'
import { mentionedUsersOf, mentionRuleBroken } from './status-mentions.js'
import type { StatusKind, StatusRule } from './types.js'

/** The `<meta status_setting>` values (oxidezap/whatsapp-rust src/features/status.rs `StatusPrivacySetting`). */
export const STATUS_SETTINGS: readonly string[] = ['contacts', 'allowlist', 'denylist']

/** The error code of every rule below: 479 SmaxInvalid. */
export const RULE_ERROR = 479

export interface StanzaTarget {
  /** the `<to jid>` as sent */
  jid: string
  user: string
  server: string
  /** device part of the jid; undefined for a bare user jid */
  device?: number
  /** the `<enc>` inside (an SKDM for that device), if any */
  enc?: BinaryNode
}

/** What the server can read from the stanza without decrypting anything. */
export interface StanzaShape {
  /** `message`, or `status` for WA Web's newer publish stanza (publish-stanza.ts) */
  tag: string
  attrs: Record<string, string>
  /** bare `<to jid="USER"/>` entries (no device part, no children): the users the skmsg fans out to */
  bare: StanzaTarget[]
  /** device-level `<to jid="USER:DEVICE">` entries (normally each carrying an SKDM `<enc>`) */
  devices: StanzaTarget[]
  /** `<meta status_setting>` when a `<meta>` child carries one */
  statusSetting?: string
  hasMeta: boolean
  skmsg?: BinaryNode
  /** the skmsg `<enc mediatype>` (whatsapp-rust wacore/src/send/classify.rs media_type_from_message) */
  mediatype?: string
  deviceIdentity: boolean
  /** the `<meta><mentioned_users><to jid/>…` jids (status-mentions.ts); undefined when the stanza has none */
  mentioned?: string[]
}

export interface RuleBreak {
  rule: StatusRule
  detail: string
}

export function readStanza (node: BinaryNode): StanzaShape {
  const bare: StanzaTarget[] = []
  const devices: StanzaTarget[] = []
  for (const to of getBinaryNodeChildren(getBinaryNodeChild(node, 'participants'), 'to')) {
    const jid = to.attrs.jid ?? ''
    const decoded = jidDecode(jid)
    const enc = getBinaryNodeChild(to, 'enc')
    const target: StanzaTarget = { jid, user: decoded?.user ?? jid, server: decoded?.server ?? '', device: decoded?.device, enc }
    // a jid without a device part and without an <enc> is the audience form (whatsapp-rust
    // wacore/src/send/status.rs ensure_status_participants); one with a device part (even :0) is device-level
    if (decoded?.device === undefined && !enc) bare.push(target)
    else devices.push({ ...target, device: decoded?.device ?? 0 })
  }
  const meta = getBinaryNodeChildren(node, 'meta')
  const withSetting = meta.find((m) => m.attrs.status_setting !== undefined)
  const skmsg = getBinaryNodeChildren(node, 'enc').find((e) => e.attrs.type === 'skmsg')
  return {
    tag: node.tag,
    attrs: { ...node.attrs },
    bare,
    devices,
    statusSetting: withSetting?.attrs.status_setting,
    hasMeta: withSetting !== undefined,
    skmsg,
    mediatype: skmsg?.attrs.mediatype,
    deviceIdentity: getBinaryNodeChild(node, 'device-identity') !== undefined,
    mentioned: mentionedUsersOf(node)
  }
}

/**
 * The kind the stanza itself announces: `type="reaction"` (Baileys rc14 Socket/messages-send.js
 * getMessageType; whatsapp-rust wacore/src/send/classify.rs), or an `edit` attribute 7/8 (rc14 marks
 * a delete that way). WA Web's revoke carries neither (type "text", no `edit`: whatsapp-rust
 * src/features/status.rs `Status::revoke`), so otherwise the content decides (`kindOfContent`).
 */
export function kindFromStanza (shape: StanzaShape): StatusKind | undefined {
  if (shape.attrs.type === 'reaction') return 'reaction'
  if (shape.attrs.edit === '7' || shape.attrs.edit === '8') return 'revoke'
  return undefined
}

export function kindOfContent (content: proto.IMessage | undefined): StatusKind {
  if (content?.reactionMessage || content?.encReactionMessage) return 'reaction'
  if (content?.protocolMessage?.type === proto.Message.ProtocolMessage.Type.REVOKE) return 'revoke'
  return 'post'
}

const isPnServer = (server: string) => server === 's.whatsapp.net' || server === 'c.us'

/** Rules that need no knowledge of what the stanza carries. */
export function stanzaRuleBroken (shape: StanzaShape, poster: Account): RuleBreak | undefined {
  // whatsapp-rust PR #925 (commit 9e8c70e2, "fix(status): omit addressing_mode on status@broadcast
  // send"): the server NACKs addressing_mode on status@broadcast with 479 (comment in
  // wacore/src/send/group.rs prepare_group_stanza; e2e tests/e2e/tests/status.rs
  // status_broadcast_send_is_wa_web_compliant). Applies to every account.
  if (shape.attrs.addressing_mode !== undefined) {
    return { rule: 'addressing-mode', detail: `addressing_mode="${shape.attrs.addressing_mode}" on a status@broadcast stanza` }
  }
  // WhiskeySockets/Baileys #2794: an LID-migrated account's PN-addressed status (rc14 statusJidList
  // of phone numbers) is NACKed 479; whatsapp-rust PR #568 ("Since the LID 1:1 migration, status is
  // LID-addressed, not PN"; WA Web maps every recipient through toUserLid). Legacy accounts keep PN, except in
  // a <status> publish stanza: its audience is LIDs only for everyone (publish-stanza.ts).
  if (!poster.legacy || shape.tag === 'status') {
    const pn = [...shape.bare, ...shape.devices].find((t) => isPnServer(t.server))
    if (pn) return { rule: 'pn-participants', detail: `<${shape.tag}> from ${poster.legacy ? 'a legacy' : 'an LID-migrated'} account addressed <to jid="${pn.jid}"> by phone number` }
  }
  return mentionRuleBroken(shape.mentioned, poster)
}

/** Rules that depend on what the stanza is: a post, a reaction or a revoke. */
export function kindRuleBroken (shape: StanzaShape, poster: Account, kind: StatusKind): RuleBreak | undefined {
  if (kind === 'post') {
    // whatsapp-rust PR #925: the e2e test asserts a WA-Web-compliant status post carries
    // <meta status_setting>; values contacts|allowlist|denylist (src/features/status.rs). A migrated
    // account's post without it is refused (the NACKed rc14 posts of Baileys #2794 carry none).
    // Legacy accounts: rc14's meta-less posts are accepted, as before the migration.
    if (poster.legacy) return undefined
    if (!shape.hasMeta) return { rule: 'missing-status-setting', detail: 'status post without <meta status_setting>' }
    if (!STATUS_SETTINGS.includes(shape.statusSetting ?? '')) {
      return { rule: 'missing-status-setting', detail: `status_setting="${shape.statusSetting}" is not one of ${STATUS_SETTINGS.join('|')}` }
    }
    return undefined
  }
  // whatsapp-rust PR #569 (merged 2026-04-18): a status reaction carrying <meta status_setting> was
  // NACKed 479; WA Web attaches it only to posts (WAWebEncryptAndSendStatusMsg).
  // wacore/src/send/status.rs status_carries_privacy_meta: false for REVOKE and for reactions.
  if (shape.hasMeta) {
    return { rule: kind === 'reaction' ? 'status-setting-on-reaction' : 'status-setting-on-revoke', detail: `a ${kind} carrying <meta status_setting>` }
  }
  return undefined
}

/**
 * The `<enc mediatype>` WA Web puts on a message with this content (whatsapp-rust wacore/src/send/classify.rs
 * media_type_from_message, "Matches WAWebBackendJobsCommon.mediaTypeFromProtobuf": image, video or gif, ptv,
 * `ptt` for an audioMessage with ptt, else `audio`); undefined for content that carries none (text, revoke).
 * The same file notes that the server drops a `type="media"` stanza without its mediatype.
 */
export function expectedMediaType (content: proto.IMessage): string | undefined {
  if (content.imageMessage) return 'image'
  if (content.videoMessage) return content.videoMessage.gifPlayback === true ? 'gif' : 'video'
  if (content.ptvMessage) return 'ptv'
  if (content.audioMessage) return content.audioMessage.ptt === true ? 'ptt' : 'audio'
  return undefined
}
