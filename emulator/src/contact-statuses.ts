/**
 * Contacts' statuses, delivered to an account's linked devices as the platform delivers them today: a
 * top-level `<status>` stanza, owed an `<ack class="status">`.
 *
 * Sources (each rule below cites the one it follows):
 * - oxidezap/whatsapp-rust PR #1101 (commit 4ae76fcb, merged 2026-07-25, "fix(recv): handle and acknowledge
 *   top-level status stanzas", from a three-day production log): the server delivers E2EE status updates as
 *   `<status from="status@broadcast" participant="…@lid" type="text|media" id t><enc v="2" type="skmsg|pkmsg"/></status>`
 *   (test `status_stanza_gets_transport_ack`); WA Web's `handleMessagingStanza` retags it to `message` and runs
 *   the normal pipeline; the ack is `<ack class="status" id to="status@broadcast" participant type [from=own device]>`;
 *   unacked, the server "recycles the stream every ~50 min to demand its ack" with
 *   `<stream:error><ack class="status"/></stream:error>` and redelivers the stanza at every login.
 * - tulir/whatsmeow commit a2381054 "client: handle `<status>` nodes" (2026-07-20): registers a `status` node
 *   handler that acks it (`sendAck`: class = the tag, id, to = from, participant, type).
 * - A delivery receipt besides the ack: whatsapp-rust PR #630 (commit 8b11141b, 2026-05-16; `src/receipt.rs`):
 *   WA Web's `DeliveryReceiptJob` sends `<receipt to="status@broadcast" id participant context="status">` for a
 *   decrypted status ("`C = y && isStatusStanzaReceiveEnabled() ? "status" : void 0`"); a read receipt (PR #744,
 *   commit 2413271c) is `type="read"` with `context="status"` and `peer_participant_pn` for a LID author. The
 *   emulator records every receipt a client sends for a contact's status; it requires none (only the ack is owed).
 * - Mentions (status-mentions.ts): a status naming users carries `<meta><mentioned_users><to jid=LID user
 *   peer_pn_jid/>…` (1 to 5: WASmaxInStatusDeliverStatusEncMentionedUsersMixin) and, for a recipient it names,
 *   `<meta status_mentioned="true">` on the same `<meta>` (WASmaxInStatusDeliverStatusEncMentionedMixin; WA Web's
 *   WAWebHandleMsgParser reads `meta.maybeAttrString("status_mentioned") === "true"`).
 * - Group statuses: WA Web's `WAWebCommsHandleMessagingStanza` takes a `<status>` whose `from` is a group JID as a
 *   group status (`isGroupStatusStanza`; the deliver schema `WASmaxInStatusDeliverFromGroupMixin`: `from` a group
 *   JID, `participant` the poster's device, `t`), retags it `message` and decrypts it as a group message (the
 *   poster's sender key for that group). The content is wrapped in `groupStatusMessageV2` (a FutureProofMessage,
 *   field 103 of rc14's WAProto.proto); a media one carries its `<enc mediatype>` (zapo #255, 2026-08-18: a
 *   `type="media"` stanza without a mediatype is invalid).
 */
import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto'
import { encodeWAMessage, getMediaKeys, jidEncode, type BinaryNode, type MediaType, type proto } from '@whiskeysockets/baileys'
import { GroupCipher, GroupSessionBuilder, SenderKeyName, SenderKeyRecord } from '@whiskeysockets/baileys/lib/Signal/Group/index.js'
import { ProtocolAddress } from 'libsignal'
import type { Account, CompanionDevice, Contact } from './accounts.js'
import { signalNameOf } from './accounts.js'
import { EmulatorError } from './errors.js'
import { phoneMessageId } from './phone.js'
import { signalSenderFor } from './signal-party.js'
import { MAX_MENTIONED_USERS } from './status-mentions.js'
import type { ContactStatusInfo, ContactStatusLog, ContactStatusOptions, ContactStatusReceipt } from './types-messages.js'

export const STATUS_JID = 'status@broadcast'
/** How long the server waits for the ack before it ends the stream: "about every 50 minutes" (whatsapp-rust PR #1101). */
export const DEFAULT_STATUS_ACK_DEADLINE_MS = 50 * 60 * 1000

/** A contact's own sender key for status@broadcast (one per contact, reused across its posts, as a phone does). */
class SenderKey {
  private readonly records = new Map<string, SenderKeyRecord>()
  private readonly store = {
    loadSenderKey: async (name: SenderKeyName) => this.records.get(name.toString()) ?? new SenderKeyRecord(),
    storeSenderKey: async (name: SenderKeyName, record: SenderKeyRecord) => { this.records.set(name.toString(), record) }
  }

  private readonly name: SenderKeyName
  private distribution?: Buffer

  /** `group`: status@broadcast, or the group of a group status */
  constructor (contact: Contact, private readonly group = STATUS_JID) {
    const name = signalNameOf(contact)
    const sender = signalSenderFor(name.user, name.server, 0)
    this.name = new SenderKeyName(group, new ProtocolAddress(sender.name, sender.device))
  }

  /** the sender-key distribution message (made with the key, once) */
  async skdm (): Promise<Buffer> {
    this.distribution ??= Buffer.from((await new GroupSessionBuilder(this.store).create(this.name)).serialize())
    return this.distribution
  }

  async encrypt (padded: Uint8Array): Promise<Buffer> {
    await this.skdm()
    return Buffer.from(await new GroupCipher(this.store, this.name).encrypt(Buffer.from(padded)))
  }
}

/** WhatsApp media encryption (the inverse of MediaServer.decrypt): AES-256-CBC || HMAC-SHA256[0..10]. */
export async function encryptMedia (plaintext: Buffer, mediaKey: Buffer, mediaType: MediaType): Promise<Buffer> {
  const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, mediaType)
  const cipher = createCipheriv('aes-256-cbc', cipherKey, iv)
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()])
  const mac = createHmac('sha256', macKey!).update(iv).update(ciphertext).digest().subarray(0, 10)
  return Buffer.concat([ciphertext, mac])
}

interface Delivery {
  device: number
  node: BinaryNode
  encTypes: string[]
  delivered: number
  redelivered: number
  ackedAt?: string
  ack?: Record<string, string>
}
/** keeps a post's encrypted media on the emulator's media server: where a device downloads it */
type StoreMedia = (mediaType: string, body: Buffer) => { url: string, directPath: string }
interface Entry { info: Omit<ContactStatusInfo, 'deliveries' | 'receipts'>, deliveries: Delivery[], receipts: ContactStatusReceipt[] }

/** What one account was sent of its contacts' statuses, and how its devices answered. */
interface AccountLog {
  entries: Entry[]
  streamErrors: ContactStatusLog['streamErrors']
  unmatchedAcks: ContactStatusLog['unmatchedAcks']
}

/** A checked post request: what build() takes (`mentioned`: the named parties, resolved by the caller). */
export interface ContactStatusPost {
  text?: string
  media?: { mimetype: string, size: number, caption?: string }
  withoutKey?: boolean
  mentions?: string[]
  mentioned?: Array<{ number: string, lid: string }>
  group?: string
}

/** Validates a post request; text or media, never both or neither. */
export function checkContactStatus (options: ContactStatusOptions): ContactStatusPost {
  if (options === null || typeof options !== 'object') throw new EmulatorError(400, 'a JSON body is required')
  const { text, media } = options
  if ((text === undefined) === (media === undefined)) throw new EmulatorError(400, 'exactly one of text or media is required')
  if (options.withoutKey !== undefined && typeof options.withoutKey !== 'boolean') throw new EmulatorError(400, 'withoutKey must be a boolean')
  const withoutKey: ContactStatusPost = options.withoutKey === true ? { withoutKey: true } : {}
  if (options.mentions !== undefined) {
    // 1 to 5 users (status-mentions.ts MAX_MENTIONED_USERS, WA Web's schema)
    if (!Array.isArray(options.mentions) || options.mentions.length < 1 || options.mentions.length > MAX_MENTIONED_USERS ||
      !options.mentions.every((m) => typeof m === 'string' && /^[0-9]{6,15}$/.test(m))) {
      throw new EmulatorError(400, `mentions must be 1 to ${MAX_MENTIONED_USERS} numbers`)
    }
    withoutKey.mentions = [...options.mentions]
  }
  if (options.group !== undefined) {
    if (typeof options.group !== 'string' || !/^[0-9]+(-[0-9]+)?@g\.us$/.test(options.group)) throw new EmulatorError(400, 'group must be a group JID (…@g.us)')
    withoutKey.group = options.group
  }
  if (text !== undefined) {
    if (typeof text !== 'string' || text === '') throw new EmulatorError(400, 'text must be a non-empty string')
    return { text, ...withoutKey }
  }
  if (media === null || typeof media !== 'object') throw new EmulatorError(400, 'media must be an object')
  const mimetype = media.mimetype ?? 'image/jpeg'
  if (typeof mimetype !== 'string' || !/^(image|video)\/[a-z0-9.+-]+$/.test(mimetype)) throw new EmulatorError(400, 'media.mimetype must be an image/* or video/* type')
  const size = media.size ?? 1024
  if (!Number.isInteger(size) || size < 1 || size > 16 * 1024 * 1024) throw new EmulatorError(400, 'media.size must be 1..16777216')
  if (media.caption !== undefined && typeof media.caption !== 'string') throw new EmulatorError(400, 'media.caption must be a string')
  return { media: { mimetype, size, ...(media.caption !== undefined ? { caption: media.caption } : {}) }, ...withoutKey }
}

/** Keeps the accounts' logs and the contacts' sender keys; builds and encrypts the stanzas. */
export class ContactStatuses {
  /** a contact's sender key per group (`number|group`: status@broadcast, or a group of group statuses) */
  private readonly keys = new Map<string, SenderKey>()
  /** companion devices (by account + device id) that hold a contact's sender key: they get skmsg only */
  private readonly distributed = new Map<string, Set<string>>()
  private readonly logs = new Map<Account, AccountLog>()
  private readonly byNode = new WeakMap<BinaryNode, { entry: Entry, delivery: Delivery }>()
  /** encryption goes one stanza at a time (a session's next key must not be used twice) */
  private chain: Promise<unknown> = Promise.resolve()

  constructor (public deadlineMs: number) {}

  private logOf (account: Account): AccountLog {
    let log = this.logs.get(account)
    if (log === undefined) {
      log = { entries: [], streamErrors: [], unmatchedAcks: [] }
      this.logs.set(account, log)
    }
    return log
  }

  /**
   * The `<status>` stanza for each linked device of `account`: the post under the contact's sender key
   * (`skmsg`), preceded, for a device that does not hold that key yet, by a `pkmsg` (or `msg`) carrying the
   * sender-key distribution message, encrypted by the contact's phone through its Signal session with the
   * device (the same two `<enc>`s a `<message from="status@broadcast">` carries; whatsapp-rust PR #1101 test).
   */
  async build (
    account: Account, contact: Contact, post: ContactStatusPost, storeMedia: StoreMedia
  ): Promise<{ id: string, nodes: Array<{ device: CompanionDevice, node: BinaryNode }> }> {
    const run = this.chain.then(async () => await this.encrypt(account, contact, post, storeMedia))
    this.chain = run.catch(() => undefined)
    return await run
  }

  private async encrypt (
    account: Account, contact: Contact, post: ContactStatusPost, storeMedia: StoreMedia
  ): Promise<{ id: string, nodes: Array<{ device: CompanionDevice, node: BinaryNode }> }> {
    const group = post.group ?? STATUS_JID
    const keyName = `${contact.number}|${group}`
    let key = this.keys.get(keyName)
    if (key === undefined) {
      key = new SenderKey(contact, group)
      this.keys.set(keyName, key)
    }
    const now = new Date()
    const t = String(Math.floor(now.getTime() / 1000))
    const id = phoneMessageId()
    let message: proto.IMessage
    if (post.text !== undefined) {
      message = { extendedTextMessage: { text: post.text } }
    } else {
      const media = post.media!
      const mediaType = media.mimetype.startsWith('video/') ? 'video' : 'image'
      const plaintext = randomBytes(media.size)
      const mediaKey = randomBytes(32)
      const body = await encryptMedia(plaintext, mediaKey, mediaType)
      const stored = storeMedia(mediaType, body)
      const content = {
        url: stored.url,
        directPath: stored.directPath,
        mimetype: media.mimetype,
        mediaKey,
        fileLength: media.size,
        fileSha256: createHash('sha256').update(plaintext).digest(),
        fileEncSha256: createHash('sha256').update(body).digest(),
        mediaKeyTimestamp: Math.floor(now.getTime() / 1000),
        ...(media.caption !== undefined ? { caption: media.caption } : {})
      }
      message = mediaType === 'video' ? { videoMessage: content } : { imageMessage: content }
    }
    // a group status: its content in groupStatusMessageV2 (see the sources above)
    if (post.group !== undefined) message = { groupStatusMessageV2: { message } }
    const skmsg = await key.encrypt(encodeWAMessage(message))
    const skdmMessage = encodeWAMessage({ senderKeyDistributionMessage: { groupId: group, axolotlSenderKeyDistributionMessage: await key.skdm() } })
    let holders = this.distributed.get(keyName)
    if (holders === undefined) {
      holders = new Set()
      this.distributed.set(keyName, holders)
    }
    const phone = contact.devices[0]
    const participant = contact.legacy ? jidEncode(contact.number, 's.whatsapp.net') : jidEncode(contact.lid, 'lid')
    const type = post.text !== undefined ? 'text' : 'media'
    const entry: Entry = {
      info: {
        id,
        to: account.number,
        from: contact.number,
        fromLid: contact.lid,
        participant,
        type,
        ...(post.text !== undefined ? { text: post.text } : {}),
        ...(post.media !== undefined
          ? { media: { mimetype: post.media.mimetype, size: post.media.size }, ...(post.media.caption !== undefined ? { caption: post.media.caption } : {}) }
          : {}),
        postedAt: now.toISOString(),
        ...(post.mentions !== undefined ? { mentions: [...post.mentions] } : {}),
        ...(post.group !== undefined ? { group: post.group } : {})
      },
      deliveries: [],
      receipts: []
    }
    const out: Array<{ device: CompanionDevice, node: BinaryNode }> = []
    const name = signalNameOf(account)
    for (const device of account.activeCompanions()) {
      const holder = `${account.number}:${device.id}`
      const encs: BinaryNode[] = []
      // `withoutKey`: a device that lacks the key gets none (as one that lost its sender-key state): it cannot decrypt
      if (!holders.has(holder) && post.withoutKey !== true) {
        const enc = await phone.encrypt(signalSenderFor(name.user, name.server, device.id), () => device.takeBundle(), skdmMessage)
        encs.push({ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.body })
        holders.add(holder)
      }
      const mediatype: Record<string, string> = post.group !== undefined && post.media !== undefined ? { mediatype: post.media.mimetype.startsWith('video/') ? 'video' : 'image' } : {}
      encs.push({ tag: 'enc', attrs: { v: '2', type: 'skmsg', ...mediatype }, content: skmsg })
      const meta = mentionMeta(post, account)
      const node: BinaryNode = { tag: 'status', attrs: { from: group, participant, type, id, t, notify: contact.number }, content: meta === undefined ? encs : [...encs, meta] }
      const delivery: Delivery = { device: device.id, node, encTypes: encs.map((e) => e.attrs.type), delivered: 0, redelivered: 0 }
      entry.deliveries.push(delivery)
      this.byNode.set(node, { entry, delivery })
      out.push({ device, node })
    }
    this.logOf(account).entries.push(entry)
    return { id, nodes: out }
  }

  /** `node` was written to a device; `again`: it had been written before and was not acked (a login's redelivery). */
  written (node: BinaryNode, again: boolean): void {
    const hit = this.byNode.get(node)
    if (hit === undefined) return
    hit.delivery.delivered++
    if (again) hit.delivery.redelivered++
  }

  /** the ack that matched `node` in the ack ledger */
  acked (node: BinaryNode, ack: BinaryNode): void {
    const hit = this.byNode.get(node)
    if (hit === undefined || hit.delivery.ackedAt !== undefined) return
    hit.delivery.ackedAt = new Date().toISOString()
    hit.delivery.ack = { ...ack.attrs }
  }

  /** an ack naming status@broadcast (or class status) that matched no stanza waiting for one */
  unmatchedAck (account: Account, device: number, ack: BinaryNode): void {
    if (ack.attrs.class !== 'status' && ack.attrs.to !== STATUS_JID) return
    const log = this.logOf(account)
    log.unmatchedAcks.push({ at: new Date().toISOString(), device, attrs: { ...ack.attrs } })
    if (log.unmatchedAcks.length > 1000) log.unmatchedAcks.shift()
  }

  /** a `<receipt to="status@broadcast">` from a device: recorded on the contact's status it names */
  receipt (account: Account, device: number, receipt: BinaryNode): boolean {
    const entry = this.logs.get(account)?.entries.find((e) => e.info.id === receipt.attrs.id)
    // to status@broadcast, or to the group of a group status
    if (entry === undefined || (receipt.attrs.to !== STATUS_JID && receipt.attrs.to !== entry.info.group)) return false
    entry.receipts.push({ at: new Date().toISOString(), device, type: receipt.attrs.type ?? 'delivery', attrs: { ...receipt.attrs } })
    return true
  }

  streamError (account: Account, device: number, connection: number, ack: Record<string, string>): void {
    this.logOf(account).streamErrors.push({ at: new Date().toISOString(), device, connection, ack })
  }

  isContactStatus (node: BinaryNode): boolean {
    return this.byNode.has(node)
  }

  log (account: Account): ContactStatusLog {
    const log = this.logs.get(account)
    return {
      ackDeadlineMs: this.deadlineMs,
      statuses: (log?.entries ?? []).map((e) => ({
        ...e.info,
        deliveries: e.deliveries.map(({ node: _node, ...d }) => ({ ...d, acked: d.ackedAt !== undefined })),
        receipts: e.receipts.map((r) => ({ ...r, attrs: { ...r.attrs } }))
      })),
      streamErrors: (log?.streamErrors ?? []).map((s) => ({ ...s })),
      unmatchedAcks: (log?.unmatchedAcks ?? []).map((u) => ({ ...u }))
    }
  }
}

/**
 * The `<meta>` of a status that mentions users: `<mentioned_users><to jid=LID user peer_pn_jid/>…`, and
 * `status_mentioned="true"` when the receiving account is one of them (see the sources above).
 */
function mentionMeta (post: ContactStatusPost, account: Account): BinaryNode | undefined {
  if (post.mentioned === undefined || post.mentioned.length === 0) return undefined
  const named = post.mentioned.some((m) => m.number === account.number)
  return {
    tag: 'meta',
    attrs: named ? { status_mentioned: 'true' } : {},
    content: [{
      tag: 'mentioned_users',
      attrs: {},
      content: post.mentioned.map((m): BinaryNode => ({ tag: 'to', attrs: { jid: jidEncode(m.lid, 'lid'), peer_pn_jid: jidEncode(m.number, 's.whatsapp.net') } }))
    }]
  }
}

/** The fields of an `<ack>` for a status stanza, as the server names it in its stream error. */
export function ackOf (node: BinaryNode): Record<string, string> {
  const { id, from, participant, type } = node.attrs
  return { class: node.tag, id, to: from, ...(participant !== undefined ? { participant } : {}), ...(type !== undefined ? { type } : {}) }
}
