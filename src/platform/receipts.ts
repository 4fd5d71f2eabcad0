import {
  areJidsSameUser,
  getBinaryNodeChildren,
  isJidStatusBroadcast,
  jidNormalizedUser,
  type BinaryNode,
  type MessageUserReceipt,
  type WAMessageKey,
  type WASocket
} from '@whiskeysockets/baileys'
import type { PlatformLogger as Logger } from './logger.js'
import type { ReceiptEvent } from './types.js'
import { resolveNumbers, type LidResolver } from './lid.js'

// Status receipts reach us two ways.
//
// 1. `message-receipt.update`, from rc14's handleReceipt (lib/Socket/messages-recv.js:1161-1233).
//    It reports a status receipt only when the stanza has a `participant`, that participant is not our
//    own phone number (own-device views go to its `messages.update` branch with a remoteJid of
//    `attrs.recipient`, i.e. nowhere), and the type is one of its STATUS_MAP (Utils/generics.js:265):
//    none (delivery), read, read-self, played, sender. It takes extra ids only from the FIRST child
//    (`content[0]`, expected to be `<list><item id/>…</list>`), and it reports `played` and `sender`
//    alike as a `readTimestamp`.
// 2. A raw `CB:receipt` listener on the socket, which sees the whole stanza first (Baileys handles it
//    after an await). It emits the (id, viewer) pairs rc14 leaves out: other `<list>` children, viewers
//    listed in a `<participants>` child, own-number views, `played-self`; and it marks which of rc14's
//    reports were really `played`, or a `sender` echo (no view at all, dropped).
//
// `coveredByBaileys` mirrors rule 1 exactly, so every pair comes out once.

export type ReceiptKind = ReceiptEvent['type']
export type PendingReceipt = Omit<ReceiptEvent, 'viewerNumber' | 'isOwn'>

const STATUS_JID = 'status@broadcast'
const BAILEYS_REPORTED_TYPES = new Set([undefined, 'read', 'read-self', 'played', 'sender'])

/** what a receipt type means for us; 'sender' (our own device echoing our send) is no view at all */
function kindOf (type: string | undefined): ReceiptKind | 'sender' | null {
  if (type === undefined) return 'delivery'
  if (type === 'read' || type === 'read-self') return 'read'
  if (type === 'played' || type === 'played-self') return 'played'
  if (type === 'sender') return 'sender'
  return null
}

const hintKey = (messageId: string, viewerJid: string): string => `${messageId}\n${viewerJid}`

export interface SplitReceipt {
  /** pairs rc14 will not report */
  extra: PendingReceipt[]
  /** pairs rc14 will report as a read, with what they really are */
  corrections: Array<{ key: string, kind: 'played' | 'ignore' }>
}

/** The (id, viewer) pairs in a raw status receipt stanza, split by whether rc14 will report them. */
export function splitStatusReceipt (node: BinaryNode, me: { id?: string }): SplitReceipt {
  const { attrs } = node
  const kind = kindOf(attrs.type)
  if (attrs.from !== STATUS_JID || kind === null || attrs.id === undefined) return { extra: [], corrections: [] }
  const seconds = Number(attrs.t)
  const at = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : Date.now()
  const children = Array.isArray(node.content) ? node.content : []

  const ids = [attrs.id]
  for (const list of children.filter((c) => c.tag === 'list')) {
    for (const item of getBinaryNodeChildren(list, 'item')) if (item.attrs.id !== undefined) ids.push(item.attrs.id)
  }
  const viewers: Array<{ jid: string, at: number }> = []
  if (attrs.participant !== undefined) viewers.push({ jid: jidNormalizedUser(attrs.participant), at })
  for (const group of children.filter((c) => c.tag === 'participants')) {
    for (const user of Array.isArray(group.content) ? group.content : []) {
      if (user.attrs.jid === undefined) continue
      const t = Number(user.attrs.t)
      viewers.push({ jid: jidNormalizedUser(user.attrs.jid), at: Number.isFinite(t) && t > 0 ? t * 1000 : at })
    }
  }

  const covered = new Set<string>()
  const fromOwnNumber = attrs.participant !== undefined && (areJidsSameUser(attrs.participant, me.id) ?? false)
  if (attrs.participant !== undefined && !fromOwnNumber && BAILEYS_REPORTED_TYPES.has(attrs.type)) {
    const first = children[0]
    const baileysIds = [attrs.id, ...(first === undefined ? [] : getBinaryNodeChildren(first, 'item').map((i) => i.attrs.id))]
    for (const id of baileysIds) covered.add(hintKey(id, jidNormalizedUser(attrs.participant)))
  }

  const out: SplitReceipt = { extra: [], corrections: [] }
  const seen = new Set<string>()
  for (const viewer of viewers) {
    for (const messageId of ids) {
      const key = hintKey(messageId, viewer.jid)
      if (seen.has(key)) continue
      seen.add(key)
      if (covered.has(key)) {
        if (kind === 'played') out.corrections.push({ key, kind: 'played' })
        else if (kind === 'sender') out.corrections.push({ key, kind: 'ignore' })
      } else if (kind !== 'sender') {
        out.extra.push({ messageId, viewerJid: viewer.jid, type: kind, at: viewer.at })
      }
    }
  }
  return out
}

export interface ReceiptBatcherOptions {
  emit: (receipts: ReceiptEvent[]) => void
  lidResolver: () => LidResolver | null
  /** the session's own number, to mark views from its own devices */
  ownNumber: () => string | null
  /** false once the session is gone: receipts are no longer taken */
  live: () => boolean
  logger: Logger
}

/**
 * Collects one session's status receipts, resolves LIDs to numbers and emits what arrived in one tick
 * as one batch, in arrival order.
 */
export class ReceiptBatcher {
  readonly #pending: PendingReceipt[] = []
  readonly #corrections = new Map<string, 'played' | 'ignore'>()
  #scheduled = false
  #chain: Promise<void> = Promise.resolve()

  constructor (private readonly options: ReceiptBatcherOptions) {}

  /**
   * Where receipts enter: the raw stanza (synchronously, before Baileys' own handler gets past its
   * first await and acks it) and Baileys' buffered `message-receipt.update`.
   */
  listen (sock: WASocket, ownJid: () => string | undefined): void {
    sock.ev.on('message-receipt.update', (updates) => { if (this.options.live()) this.onBaileysReceipts(updates) })
    sock.ws.on('CB:receipt', (node: BinaryNode) => { if (this.options.live()) this.onStanza(node, { id: ownJid() }) })
  }

  /** from the raw stanza listener */
  onStanza (node: BinaryNode, me: { id?: string }): void {
    const { extra, corrections } = splitStatusReceipt(node, me)
    for (const { key, kind } of corrections) this.#correct(key, kind)
    for (const receipt of extra) this.#push(receipt)
  }

  /** from Baileys' `message-receipt.update` */
  onBaileysReceipts (updates: Array<{ key: WAMessageKey, receipt: MessageUserReceipt }>): void {
    for (const { key, receipt } of updates) {
      if (key.fromMe !== true || key.id == null || !(isJidStatusBroadcast(key.remoteJid ?? '') ?? false)) continue
      if (receipt.userJid == null) continue
      const viewerJid = jidNormalizedUser(receipt.userJid)
      const messageId = key.id
      const seconds = (t: unknown): number | null => {
        const n = Number(t)
        return t != null && Number.isFinite(n) && n > 0 ? n * 1000 : null
      }
      const played = seconds(receipt.playedTimestamp)
      const read = seconds(receipt.readTimestamp)
      const delivered = seconds(receipt.receiptTimestamp)
      // buffered events are merged per viewer, so one update can carry a delivery and a view
      if (delivered !== null) this.#push({ messageId, viewerJid, type: 'delivery', at: delivered })
      if (played !== null) this.#push({ messageId, viewerJid, type: 'played', at: played })
      else if (read !== null) {
        const key = hintKey(messageId, viewerJid)
        const correction = this.#corrections.get(key)
        this.#corrections.delete(key)
        if (correction !== 'ignore') this.#push({ messageId, viewerJid, type: correction ?? 'read', at: read })
      }
    }
  }

  #correct (key: string, kind: 'played' | 'ignore'): void {
    this.#corrections.set(key, kind)
    // bounded: a correction whose Baileys report never comes must not pile up
    if (this.#corrections.size > 1000) {
      const oldest = this.#corrections.keys().next().value
      if (oldest !== undefined) this.#corrections.delete(oldest)
    }
  }

  #push (receipt: PendingReceipt): void {
    this.#pending.push(receipt)
    if (this.#scheduled) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      const batch = this.#pending.splice(0)
      this.#chain = this.#chain.then(async () => { await this.#flush(batch) })
    })
  }

  async #flush (batch: PendingReceipt[]): Promise<void> {
    const jids = batch.map((r) => r.viewerJid)
    let numbers: Map<string, string | null>
    try {
      numbers = await resolveNumbers(jids, this.options.lidResolver())
    } catch (err) {
      this.options.logger.warn({ err }, 'could not map receipt LIDs to numbers')
      numbers = await resolveNumbers(jids, null)
    }
    const own = this.options.ownNumber()
    this.options.emit(batch.map((r) => {
      const viewerNumber = numbers.get(r.viewerJid) ?? null
      return { ...r, viewerNumber, isOwn: viewerNumber !== null && viewerNumber === own }
    }))
  }
}
