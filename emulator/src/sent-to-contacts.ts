/**
 * What an account sends to its contacts, as each recipient device decrypts it: its likes of their statuses
 * (E2EE reactions to status@broadcast) and its one-to-one messages (among them its replies to their statuses).
 *
 * Rules for a status reaction in WA Web's E2EE form (a `<message to="status@broadcast" type="reaction">` with no
 * `<enc>` of its own: isPairwiseStatusReaction; one under the status sender key is checked by status-rules.ts as
 * before), strict, each refused with 479 (SmaxInvalid) like the status rules:
 * - `reaction-no-status-setting`: no `<meta status_setting>`. oxidezap/whatsapp-rust PR #569 (2026-04-18,
 *   "drop <meta status_setting> on reactions and revokes"): a status reaction carrying it came back
 *   `<ack error="479"/>` 160 ms later; WA Web's reaction path (WAWebSendReactionMsgAction → sendAddonRecord)
 *   never attaches it.
 * - `reaction-pairwise`: a `<participants>` whose every `<to jid>` carries its own `<enc type="pkmsg|msg">`.
 *   whatsapp-rust PR #563 (2026-04-18, "status reactions via send_message with correct E2EE wire format"):
 *   WA Web encrypts a status reaction as it does a DM reaction, and `src/send/mod.rs` sends it through the DM
 *   branch (`is_status_addon`): "status@broadcast reactions fan out pairwise to the author's devices".
 * - `reaction-one-author`: the `<to>`s name the devices of one user other than the sender (the author), and
 *   may name the sender's own other devices (the DM fan-out's copy for them). Same source: the fan-out target is
 *   the author taken from `reaction_message.key.participant`.
 *
 * Accepted, the stanza is delivered to the author's devices: each simulated device decrypts its `<enc>` (the
 * sender's Signal session with it) and reads the reaction; a reaction naming no status the author posted to the
 * account is dropped by the device (recorded as such: the server cannot see inside it). The author's devices the
 * stanza left out are recorded (`missingDevices`). A one-to-one `<message>` to a contact (a reply to a status: an
 * ordinary message whose `contextInfo` quotes it) is decrypted by the contact's devices in status-mentions.ts
 * (DirectInbox, `GET /contacts/:number/messages`). Nothing here changes what the account sees; the log is read
 * through the control API (`GET /accounts/:number/sent-to-contacts`).
 */
import { jidDecode, proto, type BinaryNode } from '@whiskeysockets/baileys'
import type { Account, Directory, Party } from './accounts.js'
import { signalNameOf } from './accounts.js'
import { signalSenderFor } from './signal-party.js'
import type { SentToContact, SentToContactDelivery } from './types-messages.js'

const STATUS_JID = 'status@broadcast'

function children (node: BinaryNode, tag: string): BinaryNode[] {
  return Array.isArray(node.content) ? node.content.filter((c) => c.tag === tag) : []
}

/** a decrypted message as JSON (bytes base64, longs numbers) */
const asJson = (message: proto.Message): Record<string, unknown> => proto.Message.toObject(message, { longs: Number, bytes: String, defaults: false })

/**
 * A status reaction in WA Web's E2EE form: `type="reaction"` to status@broadcast without an `<enc>` of its own
 * (pairwise `<enc>`s in `<participants>`). A reaction under the status sender key (rc14's relayMessage) is a
 * status@broadcast message like a post, and goes through the status rules (status-rules.ts) as before.
 */
export function isPairwiseStatusReaction (node: BinaryNode): boolean {
  return node.attrs.type === 'reaction' && children(node, 'enc').length === 0
}

/** The rule a status reaction stanza breaks (its name and why), or null. */
export function statusReactionViolation (node: BinaryNode, sender: Account, directory: Directory): { rule: string, reason: string } | null {
  if (children(node, 'meta').some((m) => m.attrs.status_setting !== undefined)) {
    return { rule: 'reaction-no-status-setting', reason: 'a status reaction carries no <meta status_setting> (whatsapp-rust PR #569: NACK 479)' }
  }
  const tos = children(node, 'participants').flatMap((p) => children(p, 'to'))
  if (tos.length === 0) return { rule: 'reaction-pairwise', reason: 'a status reaction names the author\'s devices in <participants> (whatsapp-rust PR #563)' }
  const authors = new Set<string>()
  for (const to of tos) {
    const enc = children(to, 'enc')[0]
    if (enc === undefined || (enc.attrs.type !== 'pkmsg' && enc.attrs.type !== 'msg') || !(enc.content instanceof Uint8Array)) {
      return { rule: 'reaction-pairwise', reason: 'each <to> of a status reaction carries its own <enc type="pkmsg|msg"> (whatsapp-rust PR #563)' }
    }
    const jid = jidDecode(to.attrs.jid)
    const party = jid === undefined ? undefined : directory.resolveUser(jid.user, jid.server)
    if (party === sender) continue
    authors.add(party?.number ?? to.attrs.jid)
  }
  if (authors.size !== 1) {
    return { rule: 'reaction-one-author', reason: 'a status reaction goes to the devices of the status\' author alone (whatsapp-rust PR #563, is_status_addon)' }
  }
  return null
}

/** The account's log of what it sent its contacts. */
export class SentToContacts {
  private readonly logs = new Map<Account, SentToContact[]>()
  /** decryption goes one stanza at a time, in arrival order (a session's ratchet) */
  private chain: Promise<unknown> = Promise.resolve()

  constructor (
    private readonly directory: Directory,
    /** whether `number` posted status `id` to `account` (contact-statuses.ts) */
    private readonly postedTo: (account: Account, number: string, id: string) => boolean
  ) {}

  private logOf (account: Account): SentToContact[] {
    let log = this.logs.get(account)
    if (log === undefined) { log = []; this.logs.set(account, log) }
    return log
  }

  /** a status reaction refused by a rule */
  refused (account: Account, node: BinaryNode, violation: { rule: string, reason: string }): void {
    this.logOf(account).push({
      id: node.attrs.id, kind: 'status-reaction', to: null, type: node.attrs.type ?? '', at: new Date().toISOString(),
      refused: { error: 479, ...violation }, deliveries: [], missingDevices: [], ownCopies: []
    })
  }

  /**
   * Decrypts `node` as each addressed device of the recipient does and records it: a status reaction (to
   * status@broadcast), or a one-to-one message to a contact. False (nothing recorded) for anything else.
   */
  async take (account: Account, senderDevice: number, node: BinaryNode): Promise<boolean> {
    // one-to-one messages (a reply to a status among them) are read by status-mentions.ts's DirectInbox
    // (GET /contacts/:number/messages): a Signal message decrypts once
    if (node.attrs.to !== STATUS_JID) return false
    const kind = 'status-reaction' as SentToContact['kind']
    const tos = children(node, 'participants').flatMap((p) => children(p, 'to'))
    const bare = children(node, 'enc')[0]
    let recipient: Party | undefined
    if (kind === 'message') {
      const to = jidDecode(node.attrs.to)
      recipient = to === undefined ? undefined : this.directory.resolveUser(to.user, to.server)
      if (recipient === undefined || recipient.kind !== 'contact') return false
    } else {
      recipient = tos.map((t) => jidDecode(t.attrs.jid))
        .map((j) => j === undefined ? undefined : this.directory.resolveUser(j.user, j.server))
        .find((p) => p !== undefined && p !== account)
    }
    const run = this.chain.then(async () => await this.decrypt(account, senderDevice, node, kind, recipient, tos, bare))
    this.chain = run.catch(() => undefined)
    await run
    return true
  }

  private async decrypt (
    account: Account, senderDevice: number, node: BinaryNode, kind: SentToContact['kind'],
    recipient: Party | undefined, tos: BinaryNode[], bare: BinaryNode | undefined
  ): Promise<void> {
    const name = signalNameOf(account)
    const sender = signalSenderFor(name.user, name.server, senderDevice)
    const deliveries: SentToContactDelivery[] = []
    const ownCopies: SentToContactDelivery[] = []
    // a bare <enc> (one device) reads as a <to> naming the recipient's primary
    const targets = tos.length > 0 ? tos.map((t) => ({ jid: t.attrs.jid, enc: children(t, 'enc')[0] })) : bare !== undefined ? [{ jid: node.attrs.to, enc: bare }] : []
    const addressed = new Set<number>()
    for (const { jid, enc } of targets) {
      const decoded = jidDecode(jid)
      const party = decoded === undefined ? undefined : this.directory.resolveUser(decoded.user, decoded.server)
      const deviceId = decoded?.device ?? 0
      if (party === account) {
        // the sender's own other device (its phone): the DeviceSentMessage copy of a DM fan-out
        const own = this.directory.resolveDevice(party.number, 's.whatsapp.net', deviceId)?.simulated
        const copy: SentToContactDelivery = { number: party.number, device: deviceId, jid, encType: enc?.attrs.type ?? 'none', decrypted: false }
        ownCopies.push(copy)
        const t = enc?.attrs.type
        if (own === undefined || enc === undefined || !(enc.content instanceof Uint8Array) || (t !== 'pkmsg' && t !== 'msg')) { copy.error = 'not decryptable by the emulator'; continue }
        try {
          copy.message = asJson(await own.decrypt(sender, t, enc.content))
          copy.decrypted = true
        } catch (error) {
          copy.error = `decrypt failed: ${(error as Error).message}`
        }
        continue
      }
      if (party === undefined || party !== recipient) continue
      addressed.add(deviceId)
      const delivery: SentToContactDelivery = { number: party.number, device: deviceId, jid, encType: enc?.attrs.type ?? 'none', decrypted: false }
      deliveries.push(delivery)
      const device = party.kind === 'contact' ? party.devices.find((d) => d.deviceId === deviceId) : undefined
      const type = enc?.attrs.type
      if (device === undefined) { delivery.error = 'addressed device does not exist'; continue }
      if (enc === undefined || !(enc.content instanceof Uint8Array) || (type !== 'pkmsg' && type !== 'msg')) { delivery.error = `unexpected <enc type=${type ?? '?'}>`; continue }
      try {
        const message = await device.decrypt(sender, type, enc.content)
        delivery.decrypted = true
        delivery.message = asJson(message)
        const key = message.reactionMessage?.key
        if (kind === 'status-reaction' && (key?.remoteJid !== STATUS_JID || typeof key.id !== 'string' || !this.postedTo(account, party.number, key.id))) {
          delivery.error = 'the reaction names no status its author posted to the sender: the device drops it'
        }
      } catch (error) {
        delivery.error = `decrypt failed: ${(error as Error).message}`
      }
    }
    const missingDevices = recipient !== undefined && recipient.kind === 'contact'
      ? recipient.devices.map((d) => d.deviceId).filter((d) => !addressed.has(d))
      : []
    this.logOf(account).push({
      id: node.attrs.id, kind, to: recipient?.number ?? null, type: node.attrs.type ?? '', at: new Date().toISOString(),
      deliveries, missingDevices, ownCopies
    })
  }

  log (account: Account): SentToContact[] {
    const copy = (d: SentToContactDelivery): SentToContactDelivery => ({ ...d })
    return (this.logs.get(account) ?? []).map((e) => ({ ...e, deliveries: e.deliveries.map(copy), ownCopies: e.ownCopies.map(copy) }))
  }
}
