import {
  DisconnectReason,
  getBinaryNodeChildren,
  isLidUser,
  jidDecode,
  jidNormalizedUser,
  type BinaryNode,
  type WASocket
} from '@whiskeysockets/baileys'
import { pnDigits } from './lid.js'
import type { PlatformLogger as Logger } from './logger.js'
import type { ReceiptSeen, ReceiptSink, StatusView } from './types.js'

// Status receipts have one way in: the raw stanza, committed before it is acknowledged.
//
// rc14 (lib/Socket/socket.js, onMessageReceived) emits every decoded frame as `ws.emit('frame', frame)`
// first, synchronously, and only then `CB:receipt`, whose handler (messages-recv.js handleReceipt) acks
// in its `finally` after some awaits. A 'frame' listener therefore runs before Baileys has even seen the
// stanza: it reads every view in it, resolves the viewers and hands them to the service's ReceiptSink,
// which commits them synchronously. Only then does Baileys handle (and ack) the stanza.
//
// When a commit throws, the frame is renamed before Baileys dispatches it (it reads `frame.tag` after
// 'frame' returns), so no `CB:receipt` listener runs and no ack is ever sent for it; the socket is then
// ended, and the platform delivers the unacknowledged stanza again at the next login (at least once:
// commits are idempotent). A sink that answers with a promise gets the same renaming, and the frame is
// dispatched to Baileys (`CB:receipt`, the only receipt listener rc14 registers) once the promise
// resolves: an asynchronous database can hold the ack this way for as long as its commit takes.
//
// Baileys' `message-receipt.update` is not used: it covers a subset of these forms (first `<list>` only,
// never `<participants>` or own-number views, `played` reported as a read) and arrives after the ack.

export type ParsedView = Omit<StatusView, 'viewerNumber' | 'isOwn'>
export type ParsedReceipt = Omit<ParsedView, 'type'> & { type: ReceiptSeen['type'] }

const STATUS_JID = 'status@broadcast'
/** the tag a frame gets while Baileys must not handle it */
export const HELD_TAG = 'receipt-held'

/** what a receipt type means for us; 'sender' (our own device echoing our send) is nothing at all */
function receiptKind (type: string | undefined): ReceiptSeen['type'] | null {
  if (type === undefined) return 'delivery'
  if (type === 'read' || type === 'read-self') return 'read'
  if (type === 'played' || type === 'played-self') return 'played'
  return null
}

/**
 * Every (status, viewer) pair in a raw status receipt stanza: the `id` and the ids of every `<list>`
 * child, for the `participant` and every viewer of a `<participants>` child (own-device views included).
 * Deliveries come out as type 'delivery' (they are no views).
 */
export function parseStatusReceipt (node: BinaryNode): ParsedReceipt[] {
  const { attrs } = node
  const type = receiptKind(attrs.type)
  if (node.tag !== 'receipt' || attrs.from !== STATUS_JID || type === null || attrs.id === undefined) return []
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

  const out: ParsedReceipt[] = []
  const seen = new Set<string>()
  for (const viewer of viewers) {
    if (viewer.jid === '') continue
    for (const messageId of ids) {
      const key = `${messageId}\n${viewer.jid}`
      if (seen.has(key)) continue
      seen.add(key)
      out.push({ messageId, viewerJid: viewer.jid, type, at: viewer.at })
    }
  }
  return out
}

const lidUserOf = (jid: string | null | undefined): string | null =>
  jid !== null && jid !== undefined && (isLidUser(jid) ?? false) ? jidDecode(jid)?.user ?? null : null

export interface ReceiptIntakeOptions {
  sessionId: string
  sink: ReceiptSink
  /** receipts as they arrive (views after their commit), for counting */
  seen: (receipts: ReceiptSeen[]) => void
  /** the stored LID → number mapping (Baileys' `lid-mapping` keys), read synchronously */
  numberForLid: (lidUser: string) => string | null
  /** the linked account: its number and LID (`creds.me`) */
  me: () => { id?: string, lid?: string } | undefined
  /** false once the session is gone: nothing is taken any more */
  live: () => boolean
  lookupIntervalMs: number
  logger: Logger
}

/** A session's status receipts: committed through the sink before the ack; LIDs mapped as they become known. */
export class ReceiptIntake {
  /** mappings learned from `lid-mapping.update`, before Baileys has stored them */
  readonly #learned = new Map<string, string>()
  #lookupTimer: NodeJS.Timeout | null = null
  #lastLookup = 0

  constructor (private readonly options: ReceiptIntakeOptions) {}

  listen (sock: WASocket): void {
    sock.ws.on('frame', (frame: BinaryNode | Uint8Array) => {
      if (frame instanceof Uint8Array || frame.tag !== 'receipt' || !this.options.live()) return
      this.onReceipt(sock, frame)
    })
    sock.ev.on('lid-mapping.update', ({ lid, pn }) => {
      const lidUser = lidUserOf(jidNormalizedUser(lid))
      const number = pnDigits(pn)
      if (lidUser === null || number === null || !this.options.live()) return
      this.#learned.set(lidUser, number)
      if (this.#learned.size > 10_000) this.#learned.delete(this.#learned.keys().next().value as string)
      this.#mapped([{ lid: `${lidUser}@lid`, number }])
    })
  }

  /** from the raw listener: runs before Baileys has seen the stanza */
  onReceipt (sock: WASocket, frame: BinaryNode): void {
    let views: StatusView[]
    try {
      const parsed = parseStatusReceipt(frame)
      if (parsed.length === 0) return
      if (parsed[0].type === 'delivery') { this.options.seen(parsed); return }
      views = this.resolve(parsed as ParsedView[])
    } catch (err) {
      // a stanza we cannot read would fail the same way every time it came again: Baileys handles it
      this.options.logger.error({ err, id: frame.attrs.id }, 'could not read a status receipt')
      return
    }
    let result: void | Promise<void>
    try {
      result = this.options.sink.commit(this.options.sessionId, views)
    } catch (err) {
      this.#refuse(sock, frame, err)
      return
    }
    if (result instanceof Promise) this.#hold(sock, frame, result.then(() => { this.options.seen(views) }))
    else this.options.seen(views)
    if (views.some((v) => v.viewerNumber === null)) this.scheduleLookup()
  }

  /** a LID user's number: learned from the platform in this run, else the stored mapping */
  numberForLid (lidUser: string): string | null {
    return this.#learned.get(lidUser) ?? this.options.numberForLid(lidUser)
  }

  /** numbers for the viewers: phone-number JIDs directly, LIDs through the known mapping */
  resolve (parsed: ParsedView[]): StatusView[] {
    const me = this.options.me()
    const ownNumber = pnDigits(me?.id)
    const ownLid = lidUserOf(me?.lid === undefined ? undefined : jidNormalizedUser(me.lid))
    const numbers = new Map<string, string | null>()
    const numberOf = (jid: string): string | null => {
      let number = numbers.get(jid)
      if (number !== undefined) return number
      const lidUser = lidUserOf(jid)
      if (lidUser === null) number = pnDigits(jid)
      else if (lidUser === ownLid) number = ownNumber
      else number = this.#learned.get(lidUser) ?? this.options.numberForLid(lidUser)
      numbers.set(jid, number)
      return number
    }
    return parsed.map((p) => {
      const viewerNumber = numberOf(p.viewerJid)
      return { ...p, viewerNumber, isOwn: viewerNumber !== null && viewerNumber === ownNumber }
    })
  }

  /** not committed: Baileys never sees the stanza (so never acks it) and the platform gets it again after a reconnect */
  #refuse (sock: WASocket, frame: BinaryNode, err: unknown): void {
    frame.tag = HELD_TAG
    this.options.logger.error({ err, id: frame.attrs.id }, 'status receipt not committed: left unacknowledged, reconnecting so it is delivered again')
    const error = Object.assign(new Error('status receipt not committed'), { output: { statusCode: DisconnectReason.connectionClosed } })
    void sock.end(error)
  }

  /** an asynchronous commit: Baileys handles (and acks) the stanza once it resolved */
  #hold (sock: WASocket, frame: BinaryNode, commit: Promise<void>): void {
    frame.tag = HELD_TAG
    commit.then(() => {
      frame.tag = 'receipt'
      // a closed socket cannot ack: the platform sends the stanza again at the next login
      if (sock.ws.isOpen) sock.ws.emit('CB:receipt', frame)
    }, (err: unknown) => { this.#refuse(sock, frame, err) })
  }

  /** Looks up the stored mapping of the LIDs still unmapped, at most once per `lookupIntervalMs`. */
  scheduleLookup (): void {
    if (this.#lookupTimer !== null || !this.options.live()) return
    const wait = Math.max(0, this.#lastLookup + this.options.lookupIntervalMs - Date.now())
    this.#lookupTimer = setTimeout(() => {
      this.#lookupTimer = null
      this.#lastLookup = Date.now()
      this.lookupNow()
    }, wait)
    this.#lookupTimer.unref()
  }

  /**
   * One pass over the session's stored views that have no number: the mappings Baileys stored since (a
   * send's usync learns them without any event) are applied. While some stay unmapped, the next pass is
   * scheduled one interval later; each pass is one indexed query plus cached key reads, no network.
   */
  lookupNow (): void {
    if (!this.options.live()) return
    let lids: string[] | Promise<string[]>
    try {
      lids = this.options.sink.unmappedLids(this.options.sessionId, 1000)
    } catch (err) {
      this.#lookupFailed(err)
      return
    }
    // an asynchronous database (PostgreSQL) answers later
    if (lids instanceof Promise) lids.then((found) => { if (this.options.live()) this.#applyLookup(found) }, (err: unknown) => { this.#lookupFailed(err) })
    else this.#applyLookup(lids)
  }

  #lookupFailed (err: unknown): void {
    this.options.logger.warn({ err }, 'looking up unmapped viewer LIDs failed')
    this.scheduleLookup()
  }

  #applyLookup (lids: string[]): void {
    let left = 0
    try {
      const mappings: Array<{ lid: string, number: string }> = []
      for (const lid of lids) {
        const lidUser = lidUserOf(lid)
        const number = lidUser === null ? null : this.#learned.get(lidUser) ?? this.options.numberForLid(lidUser)
        if (number !== null) mappings.push({ lid, number })
      }
      left = lids.length - mappings.length
      if (mappings.length > 0) this.#mapped(mappings)
    } catch (err) {
      this.options.logger.warn({ err }, 'looking up unmapped viewer LIDs failed')
      left = 1
    }
    if (left > 0) this.scheduleLookup()
  }

  #mapped (mappings: Array<{ lid: string, number: string }>): void {
    try {
      const done = this.options.sink.lidsMapped(this.options.sessionId, mappings)
      if (done instanceof Promise) {
        done.catch((err: unknown) => {
          this.options.logger.warn({ err }, 'could not give viewers stored under a LID their number; will look again')
          this.scheduleLookup()
        })
      }
    } catch (err) {
      this.options.logger.warn({ err }, 'could not give viewers stored under a LID their number; will look again')
      this.scheduleLookup()
    }
  }

  /** cancels a pending look-up (the socket closes; the next one that opens schedules again) */
  pause (): void {
    if (this.#lookupTimer !== null) clearTimeout(this.#lookupTimer)
    this.#lookupTimer = null
  }
}
