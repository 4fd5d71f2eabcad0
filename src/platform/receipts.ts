import { DisconnectReason, jidNormalizedUser, type BinaryNode, type WASocket } from '@whiskeysockets/baileys'
import { holdFrame, onFrame, storeLidMappings } from './baileys/index.js'
import { lidUserOf, pnDigits } from './lid.js'
import { notDelivered, parseStatusReceipt, type ParsedView } from './receipt-parse.js'
import { ackFrames, type HeldFrame } from './receipt-acks.js'
import { afterReceiptTurn } from './burst-gc.js'
import { turnWaiting } from './receipt-turns.js'
import type { ReceiptIntakeOptions, StatusDelivery, StatusView } from './types.js'

// Status receipts have one way in (how a stanza's views are read: receipt-parse.ts): the raw stanza, committed before it is acknowledged.
//
// rc14 (lib/Socket/socket.js, onMessageReceived) emits every decoded frame as `ws.emit('frame', frame)`
// first, synchronously, and only then `CB:receipt`, whose handler (messages-recv.js handleReceipt) acks
// in its `finally` after some awaits. A 'frame' listener therefore runs before Baileys has even seen the
// stanza: it reads every view in it, resolves the viewers and holds the frame: it is renamed
// (baileys/socket.ts, holdFrame) before Baileys dispatches it (Baileys reads `frame.tag` after 'frame' returns), so no
// `CB:receipt` listener runs and nothing acks it yet.
//
// The views of every receipt frame that arrives in one turn of the event loop (all the frames of the
// WebSocket messages read in one go) are handed to the service's ReceiptSink in ONE commit, at
// setImmediate, with every other session's of that turn (receipt-turns.ts); once it is committed, each held frame is acknowledged with Baileys' own ack
// (`sock.sendMessageAck`, the stanza rc14's handleReceipt sends in its `finally`). One transaction per
// turn instead of one per stanza: a burst costs a few commits, not thousands, and the wait is one turn
// (no timer). The acks wait for the commit's promise (as long as the commit takes); when it rejects, none
// of the turn's frames is ever acked; the socket is then ended,
// and the platform delivers the unacknowledged stanzas again at the next login (at least once: commits
// are idempotent).
//
// Baileys' handleReceipt is not run for the views the service took: for a status view it only emits
// `message-receipt.update` (which the service does not use) before the ack, and its event buffer merges
// every such update into the earlier ones of the same status with a linear search, quadratic in a burst
// (in the receipt benchmark 23 % of the service's CPU once a turn's frames were handed over together).
// A stanza with a view in it is held whole (a grouped one may mix views and deliveries of several
// viewers; rc14 emits nothing for that form anyway, see receipt-parse.ts); one of deliveries only, retry
// receipts and anything unreadable still go to Baileys as they came.
//
// Nor would `message-receipt.update` do as the source: it covers a subset of these forms (first `<list>`
// only, never `<participants>` or own-number views, `played` reported as a read) and arrives after the ack.

/** committed frames acked per event-loop turn (see ReceiptIntake.#releaseInChunks) */
const ACK_CHUNK = 128

interface Turn { views: StatusView[], deliveries: StatusDelivery[], frames: HeldFrame[] }
/** a LID → number pair a receipt named (`participant_pn`), learned like a `lid-mapping.update` */
interface Learned { lid: string, number: string }

/** A session's status receipts: committed through the sink before the ack; LIDs mapped as they become known. */
export class ReceiptIntake {
  /** mappings learned from `lid-mapping.update` and receipts (`participant_pn`) in this run */
  readonly #learned = new Map<string, string>()
  #lookupTimer: NodeJS.Timeout | null = null
  #lastLookup = 0
  /** the views and held frames of this event-loop turn, committed together at setImmediate */
  #turn: Turn | null = null
  /** mappings receipts named (`participant_pn`) since the last commit, to be stored with the next one */
  #toStore: Learned[] = []
  /** the own ids as worked out from this `me` object (Baileys replaces it when the account's ids change) */
  #ownOf: { me: unknown, number: string | null, lid: string | null } | null = null

  constructor (private readonly options: ReceiptIntakeOptions) {}

  listen (sock: WASocket): void {
    onFrame(sock, (frame) => {
      if (frame.tag !== 'receipt' || !this.options.live()) return
      this.onReceipt(sock, frame)
    })
    sock.ev.on('lid-mapping.update', ({ lid, pn }) => {
      const lidUser = lidUserOf(jidNormalizedUser(lid))
      const number = pnDigits(pn)
      if (lidUser === null || number === null || !this.options.live()) return
      this.#remember(lidUser, number)
      this.#mapped([{ lid: `${lidUser}@lid`, number }])
    })
  }

  /** from the raw listener: runs before Baileys has seen the stanza */
  onReceipt (sock: WASocket, frame: BinaryNode): void {
    let views: StatusView[]
    let deliveries: StatusDelivery[] = []
    try {
      const parsed = parseStatusReceipt(frame)
      // a delivery the platform says did not happen (feature-incapable, receipt-parse.ts) is recorded
      // nowhere: the recipient stays sent-to, not reached. Held and acked with the turn all the same, so
      // rc14's handleReceipt never reads it as a delivery
      if (parsed.length === 0 && !notDelivered(frame)) return
      const delivered = parsed.filter((p) => p.type === 'delivery')
      const viewed = parsed.filter((p): p is ParsedView => p.type !== 'delivery')
      if (delivered.length > 0 && !this.options.sink.takesDeliveries) {
        // a sink that does not store deliveries: they are only counted, and a stanza of deliveries alone
        // goes to Baileys, which acks it as it came
        this.options.seen(delivered)
        if (viewed.length === 0) return
      } else if (delivered.length > 0) {
        // a sink that stores deliveries takes them like views: committed, then acked
        deliveries = this.resolve(delivered.map((p) => ({ ...p, type: 'read' as const }))).map(({ type: _type, ...d }) => d)
      }
      views = this.resolve(viewed)
    } catch (err) {
      // a stanza we cannot read would fail the same way every time it came again: Baileys handles it
      this.options.logger.error({ err, id: frame.attrs.id }, 'could not read a status receipt')
      return
    }
    holdFrame(frame)
    let turn = this.#turn
    if (turn === null) {
      turn = this.#turn = { views: [], deliveries: [], frames: [] }
      turnWaiting(() => { this.#commitTurn() })
    }
    for (const v of views) turn.views.push(v)
    for (const d of deliveries) turn.deliveries.push(d)
    turn.frames.push({ sock, frame })
  }

  /** the turn's views and deliveries in one commit; its frames are acked only once that resolved */
  #commitTurn (): void {
    const turn = this.#turn
    this.#turn = null
    // a removed session takes nothing more: its frames stay unacknowledged
    if (turn === null || !this.options.live()) return
    this.#storeLearned(turn)
    let result: Promise<void>
    try {
      result = this.options.sink.commit(this.options.sessionId, turn.views, turn.deliveries)
    } catch (err) {
      this.#refuse(turn, err)
      return
    }
    // acked only once committed (commit before ack)
    result.then(() => { this.#releaseInChunks(turn) }, (err: unknown) => { this.#refuse(turn, err) })
    if (turn.views.some((v) => v.viewerNumber === null)) this.scheduleLookup()
    if (turn.deliveries.length > 0) this.options.seen(turn.deliveries.map((d) => ({ messageId: d.messageId, viewerJid: d.viewerJid, type: 'delivery' as const })))
  }

  /**
   * committed: the frames are acked in arrival order, ACK_CHUNK per event-loop turn. A burst arrives as
   * a turn of thousands of frames (Baileys decodes every frame of a read at once); acking them all in one
   * go kept every ack's promises, timers and buffers alive across the storm, so they outlived young-
   * generation collections and were left as old-generation garbage (RSS 3 s after 20,000 receipts: 343
   * MB in chunks of the whole turn, 280 MB by 256, 265 MB by 64; idle 177 MB).
   */
  #releaseInChunks (turn: Turn): void {
    let next = 0
    const step = (): void => {
      const frames = turn.frames.slice(next, next + ACK_CHUNK)
      next += frames.length
      ackFrames(frames, this.options.logger)
      if (next < turn.frames.length) setImmediate(step)
      else { this.options.seen(turn.views); afterReceiptTurn(turn.frames.length, this.options.burstGcQuietMs) }
    }
    step()
  }

  /** a LID user's number: learned from the platform in this run, else the stored mapping */
  numberForLid (lidUser: string): string | null {
    return this.#learned.get(lidUser) ?? this.options.numberForLid(lidUser)
  }

  /**
   * numbers for the viewers: phone-number JIDs directly; a LID by the `participant_pn` the receipt named
   * beside it (learned as that LID's mapping, see #learnFromReceipt), else through the known mapping
   */
  resolve (parsed: ParsedView[]): StatusView[] {
    const { number: ownNumber, lid: ownLid } = this.#own()
    const numbers = new Map<string, string | null>()
    const numberOf = (jid: string, pn: string | null): string | null => {
      let number = numbers.get(jid)
      if (number !== undefined && (pn === null || number === pn)) return number
      const lidUser = lidUserOf(jid)
      if (lidUser === null) number = pnDigits(jid)
      else if (lidUser === ownLid) number = ownNumber
      else if (pn !== null) number = this.#learnFromReceipt(lidUser, pn)
      else number = this.#learned.get(lidUser) ?? this.options.numberForLid(lidUser)
      numbers.set(jid, number)
      return number
    }
    // built field by field: a rest pattern and a spread per view were half of this function's time in a burst
    return parsed.map((p) => {
      const viewerNumber = numberOf(p.viewerJid, p.viewerPn)
      const isOwn = viewerNumber !== null && viewerNumber === ownNumber
      return { messageId: p.messageId, viewerJid: p.viewerJid, type: p.type, at: p.at, viewerNumber, isOwn }
    })
  }

  /** the account's own number and LID user, worked out again only when Baileys' `me` changes (per frame they were a third of resolve's time) */
  #own (): { number: string | null, lid: string | null } {
    const me = this.options.me()
    let own = this.#ownOf
    if (own === null || own.me !== me) {
      own = this.#ownOf = { me, number: pnDigits(me?.id), lid: lidUserOf(me?.lid === undefined ? undefined : jidNormalizedUser(me.lid)) }
    }
    return own
  }

  /** a receipt named the LID's number: known from now on, stored with the next commit */
  #learnFromReceipt (lidUser: string, number: string): string {
    if (this.#learned.get(lidUser) === number) return number
    this.#remember(lidUser, number)
    this.#toStore.push({ lid: `${lidUser}@lid`, number })
    return number
  }

  #remember (lidUser: string, number: string): void {
    this.#learned.set(lidUser, number)
    if (this.#learned.size > 10_000) this.#learned.delete(this.#learned.keys().next().value as string)
  }

  /**
   * The mappings the turn's receipts named, stored as a `lid-mapping.update` is: in Baileys' LID store
   * and through the sink (views stored under the LID get the number); facts even if the commit fails.
   */
  #storeLearned (turn: Turn): void {
    const learned = this.#toStore
    if (learned.length === 0) return
    this.#toStore = []
    const sock = turn.frames[turn.frames.length - 1].sock
    storeLidMappings(sock, learned).catch((err: unknown) => { this.options.logger.warn({ err }, 'could not store LID mappings a receipt named') })
    this.#mapped(learned)
  }

  /** not committed: the frames are never acked, and the platform sends them again after a reconnect */
  #refuse (turn: Turn, err: unknown): void {
    this.options.logger.error({ err, stanzas: turn.frames.length, id: turn.frames[0]?.frame.attrs.id }, 'status receipts not committed: left unacknowledged, reconnecting so they are delivered again')
    const error = Object.assign(new Error('status receipt not committed'), { output: { statusCode: DisconnectReason.connectionClosed } })
    for (const sock of new Set(turn.frames.map((f) => f.sock))) void sock.end(error)
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
    let lids: Promise<string[]>
    try {
      lids = this.options.sink.unmappedLids(this.options.sessionId, 1000)
    } catch (err) {
      this.#lookupFailed(err)
      return
    }
    lids.then((found) => { if (this.options.live()) this.#applyLookup(found) }, (err: unknown) => { this.#lookupFailed(err) })
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
      this.options.sink.lidsMapped(this.options.sessionId, mappings).catch((err: unknown) => {
        this.options.logger.warn({ err }, 'could not give viewers stored under a LID their number; will look again')
        this.scheduleLookup()
      })
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
