/**
 * Statuses as the recipients see them: every `<message to="status@broadcast">` is decrypted for each
 * addressed device the emulator holds keys for (pkmsg/msg → sender key distribution message →
 * skmsg), then recorded per message id (several stanzas with one id are merged as chunks).
 */
import { createHash } from 'node:crypto'
import {
  jidDecode,
  jidEncode,
  normalizeMessageContent,
  proto,
  type BinaryNode,
  type JidServer,
  type MediaType
} from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import { signalNameOf, type Account, type Directory, type Party } from './accounts.js'
import { EmulatorError } from './errors.js'
import { MediaServer } from './media-server.js'
import { bundleNode, decryptSenderKeyMessage, signalSenderFor, type SignalSender, type SimulatedDevice } from './signal-party.js'
import { expectedMediaType, kindFromStanza, kindOfContent, kindRuleBroken, readStanza, RULE_ERROR, stanzaRuleBroken, type RuleBreak, type StanzaShape, type StanzaTarget } from './status-rules.js'
import type { RejectedMessage, StatusDelivery, StatusKind, StatusMedia, StatusRecord, StatusRetryRecord, StatusStanza, StatusType } from './types.js'

const STATUS_JID = 'status@broadcast'
/** Yield to the event loop every this many device decryptions so acks/receipts keep flowing. */
const YIELD_EVERY = 20

interface StatusState {
  record: StatusRecord
  /** `${number}:${device}` addressed so far, to spot devices that got the status twice */
  addressed: Set<string>
  recipients: Set<string>
  audience: Set<string>
  contentDigest?: string
}

/** The server's answer to one stanza: undefined = accepted, else the rule it broke (NACK 479). */
export type Verdict = (broken: RuleBreak | undefined) => void

/** What was decided for one stanza (once; whoever knows first: the stanza, the peek or the queue). */
interface Decision {
  decided: boolean
  kind?: StatusKind
  broken?: RuleBreak
}

interface FanoutTarget {
  jid: string
  deviceId: number
  enc?: BinaryNode
  party?: Party
}

interface RevokeState {
  revokeId: string
  targetId: string
  recipients: Set<string>
}

interface Waiter {
  predicate: (status: StatusRecord) => boolean
  resolve: (status: StatusRecord) => void
  reject: (error: Error) => void
}

/** A device told to fail a status (`failNextDecrypt`) asks for it again with this retry count. */
interface RetryAsk {
  device: SimulatedDevice
  party: Party
  count: number
}

/** What the poster is sent: the retry receipt, as the server hands it over. */
export type RetrySender = (poster: Account, posterDevice: number, receipt: BinaryNode) => void

function bigEndian (value: number, bytes: number): Buffer {
  const out = Buffer.alloc(bytes)
  out.writeUIntBE(value, 0, bytes)
  return out
}

function b64 (data: Uint8Array | null | undefined): string {
  return data ? Buffer.from(data).toString('base64') : ''
}

function copy (record: StatusRecord): StatusRecord {
  return {
    ...record,
    media: record.media ? { ...record.media } : undefined,
    recipients: [...record.recipients],
    deliveries: record.deliveries.map((d) => ({ ...d })),
    duplicateRecipients: [...record.duplicateRecipients],
    errors: [...record.errors],
    stanzas: record.stanzas.map((st) => ({
      ...st, attrs: { ...st.attrs }, audience: [...st.audience], devices: [...st.devices], skdmDevices: [...st.skdmDevices]
    })),
    audience: [...record.audience],
    skdmDevices: [...record.skdmDevices],
    rejected: record.rejected ? { ...record.rejected } : undefined,
    revokedFor: record.revokedFor ? [...record.revokedFor] : undefined,
    retries: record.retries.map((r) => ({ ...r, violations: [...r.violations] })),
    ...(record.mentionedUsers ? { mentionedUsers: [...record.mentionedUsers] } : {})
  }
}

export class StatusCenter {
  private readonly states = new Map<string, StatusState>()
  /** each status's messageSecret, by id */
  private readonly secrets = new Map<string, Buffer>()
  private readonly revokes = new Map<string, RevokeState>()
  private queue: Promise<void> = Promise.resolve()
  private pending = 0
  private readonly waiters = new Set<Waiter>()
  private readonly idleWaiters = new Set<() => void>()
  /** stanzas NACKed under the rules (status-rules.ts) */
  readonly rejected: RejectedMessage[] = []
  /** per poster device (`number:device`): the last sender key distribution message any device decrypted */
  private readonly lastSenderKey = new Map<string, Buffer>()

  constructor (
    private readonly directory: Directory,
    private readonly media: MediaServer,
    private readonly logger: Logger,
    /** delivers a retry receipt to the device that posted */
    private readonly sendRetry: RetrySender = () => {},
    /** an answer to a retry receipt must be WA Web's (EmulatorOptions.strictStatusRetries) */
    private readonly strictRetries = true
  ) {}

  /**
   * Queue a status stanza: the rules are checked (status-rules.ts) and `verdict` is called exactly once,
   * as soon as the answer is known: at once for what the stanza shows; else from its content, read with
   * the poster's sender key as last seen (the server's peek, not waiting for the queue), or failing that
   * after the first device decrypted it in the queue. Then every audience device decrypts it, in order.
   */
  enqueue (account: Account, deviceId: number, node: BinaryNode, arrivedAt: Date, verdict: Verdict): void {
    this.pending++
    const shape = readStanza(node)
    const decision: Decision = { decided: false }
    const decide = (kind: StatusKind, broken: RuleBreak | undefined) => {
      if (decision.decided) return
      Object.assign(decision, { decided: true, kind, broken })
      verdict(broken)
    }
    const retried = this.retryAnswerOf(account, shape)
    if (retried) {
      // WA Web's answer to a retry carries no <meta> and no audience list (whatsapp-rust src/retry.rs
      // retransmit_status_message: prepare_group_stanza with extra_nodes empty): only the stanza rules apply
      decide('post', stanzaRuleBroken(shape, account))
      this.queue = this.queue.then(async () => {
        try {
          await this.processRetryAnswer(account, deviceId, shape, retried, arrivedAt, decision)
        } catch (error) {
          this.logger.error({ id: node.attrs.id, err: (error as Error).message }, 'status retry answer processing failed')
        } finally {
          this.settle()
        }
      })
      return
    }
    const shown = kindFromStanza(shape)
    const stanzaBroken = stanzaRuleBroken(shape, account)
    if (stanzaBroken) decide(shown ?? 'post', stanzaBroken)
    else if (shown) decide(shown, kindRuleBroken(shape, account, shown))
    else this.peek(account, deviceId, shape, decide)
    this.queue = this.queue.then(async () => {
      try {
        await this.process(account, deviceId, shape, arrivedAt, decision, decide)
      } catch (error) {
        this.logger.error({ id: node.attrs.id, err: (error as Error).message }, 'status processing failed')
      } finally {
        decide('post', undefined)
        this.settle()
      }
    })
  }

  /** Runs `work` after every status stanza queued so far (a one-to-one message must not overtake the SKDM session it follows). */
  async afterQueued<T> (work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work)
    this.queue = run.then(() => undefined, () => undefined)
    return await run
  }

  private settle (): void {
    this.pending--
    if (this.pending === 0) {
      for (const resolve of this.idleWaiters) resolve()
      this.idleWaiters.clear()
    }
  }

  /** The unanswered retries of this status whose device the stanza addresses: then it is an answer to them. */
  private retryAnswerOf (poster: Account, shape: StanzaShape): StatusRetryRecord[] | undefined {
    const state = this.states.get(shape.attrs.id)
    if (!state || state.record.from !== poster.number) return undefined
    const pending = state.record.retries.filter((r) => !r.answered)
    if (!pending.length) return undefined
    const addressed = pending.filter((r) => shape.devices.some((t) => this.sameDevice(t, r)))
    return addressed.length ? addressed : undefined
  }

  private sameDevice (target: { user: string, server: string, device?: number }, retry: StatusRetryRecord): boolean {
    const party = this.directory.resolveUser(target.user, target.server)
    return party?.number === retry.number && (target.device ?? 0) === retry.device
  }

  /**
   * An answer to a retry receipt addressed to the device itself, not to status@broadcast (rc14's
   * sendMessagesAgain relays it pairwise to the requesting device). WA Web sends the status again to
   * status@broadcast with a sender key distribution message for the device (whatsapp-rust src/retry.rs
   * retransmit_status_message, PR #559, 2026-04-17): strict (the default), the device does not read this as
   * the status (a pairwise message outside status@broadcast is a chat message); lenient, it does. True when the
   * stanza was such an answer.
   */
  async directRetryAnswer (poster: Account, posterDevice: number, node: BinaryNode, arrivedAt: Date): Promise<boolean> {
    const to = jidDecode(node.attrs.to)
    const state = node.attrs.id ? this.states.get(node.attrs.id) : undefined
    if (!to || !state || state.record.from !== poster.number) return false
    const retry = state.record.retries.find((r) => !r.answered && this.sameDevice({ user: to.user, server: to.server, device: to.device }, r))
    if (!retry) return false
    Object.assign(retry, { answered: true, answeredAt: arrivedAt.toISOString(), answeredTo: node.attrs.to, skdm: false, decrypted: false })
    retry.violations.push('addressed to the device, not to status@broadcast (WA Web: whatsapp-rust src/retry.rs retransmit_status_message)')
    if (!this.strictRetries) {
      const enc = Array.isArray(node.content) ? node.content.find((c) => c.tag === 'enc') : undefined
      const party = this.directory.getByNumber(retry.number)
      const device = party ? this.directory.resolveDevice(party.number, 's.whatsapp.net', retry.device)?.simulated : undefined
      const type = enc?.attrs.type
      if (device && enc?.content instanceof Uint8Array && (type === 'pkmsg' || type === 'msg')) {
        const name = signalNameOf(poster)
        try {
          await device.decrypt(signalSenderFor(name.user, name.server, posterDevice), type, enc.content)
          retry.decrypted = true
          state.record.deliveries.push({
            number: retry.number, device: retry.device, jid: node.attrs.to, chunk: state.record.chunks, encType: type,
            skdm: false, decrypted: true, resend: true
          })
        } catch (error) {
          retry.error = `decrypt failed: ${(error as Error).message}`
        }
      }
    }
    this.logger.info({ id: state.record.id, to: node.attrs.to, strict: this.strictRetries }, 'status retry answered to the device itself')
    this.notify(state.record)
    return true
  }

  /**
   * The answer to retry receipts (to status@broadcast): each requesting device it addresses reads it (the
   * sender key from its SKDM, else one it holds), and the retry is recorded as answered.
   */
  private async processRetryAnswer (
    poster: Account, deviceId: number, shape: StanzaShape, retries: StatusRetryRecord[], arrivedAt: Date, decision: Decision
  ): Promise<void> {
    const state = this.states.get(shape.attrs.id)
    if (!state) return
    const { record } = state
    if (decision.broken) {
      for (const retry of retries) retry.error = `answer NACKed: ${decision.broken.rule}`
      this.notify(record)
      return
    }
    const name = signalNameOf(poster)
    const sender = signalSenderFor(name.user, name.server, deviceId)
    const asks: RetryAsk[] = []
    for (const retry of retries) {
      const target = shape.devices.find((t) => this.sameDevice(t, retry))!
      const party = this.directory.getByNumber(retry.number)
      const result = await this.decryptFor({ jid: target.jid, deviceId: retry.device, enc: target.enc, party }, sender, shape.skmsg, record.chunks, record.id)
      const { delivery } = result
      delivery.resend = true
      record.deliveries.push(delivery)
      Object.assign(retry, { answered: true, answeredAt: arrivedAt.toISOString(), answeredTo: STATUS_JID, skdm: delivery.skdm, decrypted: delivery.decrypted })
      if (delivery.error) retry.error = delivery.error
      // WA Web's answer: a sender key distribution message for exactly this device (whatsapp-rust
      // retransmit_status_message, distribution_targets = [requester], SenderKeyDistributionPolicy::Required)
      if (!delivery.skdm) retry.violations.push('no sender key distribution message for the device (WA Web: whatsapp-rust src/retry.rs retransmit_status_message)')
      if (result.skdm) result.skdm.device.rememberSenderKey(STATUS_JID, sender, result.skdm.skdm)
      if (delivery.decrypted && !state.recipients.has(delivery.number)) {
        state.recipients.add(delivery.number)
        record.recipients.push(delivery.number)
      }
      if (result.retry) asks.push(result.retry)
    }
    this.logger.info({ id: record.id, devices: retries.map((r) => `${r.number}:${r.device}`) }, 'status retry answered')
    this.askAgain(poster, deviceId, record, asks, arrivedAt)
    this.notify(record)
  }

  /**
   * The device asks for status `id` again now (it received it, and its decrypt failed late: e.g. the sender key
   * it held was lost): a retry receipt with the next count, delivered to the poster's sending device (queued
   * while it is offline).
   */
  askAgainNow (id: string, party: Party, device: SimulatedDevice): StatusRetryRecord {
    const state = this.states.get(id)
    if (!state) throw new EmulatorError(404, `no status ${id}`)
    const poster = this.directory.getByNumber(state.record.from)
    if (!poster || poster.kind !== 'account') throw new EmulatorError(409, `status ${id} was not posted by an account`)
    if (!state.record.deliveries.some((d) => d.number === party.number && d.device === device.deviceId)) {
      throw new EmulatorError(400, `${party.number}:${device.deviceId} did not receive status ${id}`)
    }
    const count = (device.failures.get(id) ?? 0) + 1
    device.failures.set(id, count)
    device.forgetSenderKey(STATUS_JID, signalSenderFor(signalNameOf(poster).user, signalNameOf(poster).server, state.record.fromDevice))
    this.askAgain(poster, state.record.fromDevice, state.record, [{ device, party, count }], new Date(state.record.receivedAt))
    this.notify(state.record)
    return { ...state.record.retries[state.record.retries.length - 1] }
  }

  /**
   * Retry receipts of the devices that failed: `<receipt from="status@broadcast" participant=DEVICE id type="retry">`
   * with `<retry count id t v="1"/>` and `<registration>`, plus `<keys>` from the second retry on. The shape is
   * WA Web's as whatsapp-rust builds it (src/retry.rs, the retry receipt builder: `<retry v="1" id t count>`,
   * `<registration>` 4 bytes big-endian, `<keys>` when should_include_keys; `error` only for a known reason,
   * left out here) and rc14's sendRetryRequest (lib/Socket/messages-recv.js), as the server relays it to the poster
   * (whatsapp-rust src/retry.rs resolve_retry_chat_info: for status@broadcast the requester is `participant`);
   * keys from count 2: whatsapp-rust wacore/src/protocol/retry.rs MIN_RETRY_COUNT_FOR_KEYS ("WhatsApp Web only
   * includes keys when retryCount >= 2").
   */
  private askAgain (poster: Account, posterDevice: number, record: StatusRecord, asks: RetryAsk[], arrivedAt: Date): void {
    const t = String(Math.floor(arrivedAt.getTime() / 1000))
    for (const { device, party, count } of asks) {
      const requester = device.failVia === 'pn'
        ? jidEncode(party.number, 's.whatsapp.net', device.deviceId || undefined)
        : jidEncode(party.lid, 'lid', device.deviceId || undefined)
      const content: BinaryNode[] = [
        { tag: 'retry', attrs: { count: String(count), id: record.id, t, v: '1' } },
        { tag: 'registration', attrs: {}, content: bigEndian(device.registrationId, 4) }
      ]
      if (count >= 2) {
        const bundle = bundleNode(requester, device.takeBundle())
        const parts = (bundle.content as BinaryNode[]).filter((c) => c.tag !== 'registration')
        content.push({ tag: 'keys', attrs: {}, content: parts })
      }
      record.retries.push({
        requester, number: party.number, device: device.deviceId, count, requestedAt: new Date().toISOString(), answered: false, violations: []
      })
      const receipt: BinaryNode = { tag: 'receipt', attrs: { from: STATUS_JID, participant: requester, id: record.id, type: 'retry', t: String(Math.floor(Date.now() / 1000)) }, content }
      this.logger.info({ id: record.id, requester, count }, 'status retry receipt sent')
      setImmediate(() => { this.sendRetry(poster, posterDevice, receipt) })
    }
  }

  /** Read the skmsg with the last sender key seen from this device (stateless); the queue decides if this fails. */
  private peek (account: Account, deviceId: number, shape: StanzaShape, decide: (kind: StatusKind, broken: RuleBreak | undefined) => void): void {
    const skdm = this.lastSenderKey.get(`${account.number}:${deviceId}`)
    const skmsg = shape.skmsg?.content
    if (!skdm || !(skmsg instanceof Uint8Array)) return
    const name = signalNameOf(account)
    decryptSenderKeyMessage(STATUS_JID, signalSenderFor(name.user, name.server, deviceId), skdm, skmsg).then(
      (message) => {
        const kind = kindOfContent(normalizeMessageContent(message))
        decide(kind, kindRuleBroken(shape, account, kind))
      },
      () => undefined
    )
  }

  list (): StatusRecord[] {
    return [...this.states.values()].map((s) => copy(s.record))
  }

  /** the status' messageSecret (an encrypted reaction to it is made with it: interactions.ts) */
  secretOf (id: string): Buffer | undefined {
    return this.secrets.get(id)
  }

  get (id: string): StatusRecord {
    const state = this.states.get(id)
    if (!state) throw new EmulatorError(404, `no status ${id}`)
    return copy(state.record)
  }

  has (id: string): boolean {
    return this.states.has(id)
  }

  waitFor (predicate: (status: StatusRecord) => boolean, timeoutMs: number): Promise<StatusRecord> {
    for (const state of this.states.values()) {
      if (predicate(state.record)) return Promise.resolve(copy(state.record))
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        predicate,
        resolve: (status) => {
          clearTimeout(timer)
          this.waiters.delete(waiter)
          resolve(copy(status))
        },
        reject: (error) => {
          clearTimeout(timer)
          reject(error)
        }
      }
      const timer = setTimeout(() => {
        this.waiters.delete(waiter)
        reject(new EmulatorError(504, `no matching status within ${timeoutMs} ms`))
      }, timeoutMs)
      this.waiters.add(waiter)
    })
  }

  /** Resolves once every queued stanza has been processed. */
  idle (timeoutMs: number): Promise<void> {
    if (this.pending === 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        this.idleWaiters.delete(done)
        reject(new EmulatorError(504, `status decryption still busy after ${timeoutMs} ms`))
      }, timeoutMs)
      this.idleWaiters.add(done)
    })
  }

  /** Release everyone waiting (the emulator is stopping). */
  close (): void {
    for (const resolve of this.idleWaiters) resolve()
    this.idleWaiters.clear()
    for (const waiter of this.waiters) waiter.reject(new EmulatorError(409, 'emulator stopped'))
    this.waiters.clear()
  }

  private notify (record: StatusRecord): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.predicate(record)) waiter.resolve(record)
    }
  }

  private async process (
    account: Account,
    deviceId: number,
    shape: StanzaShape,
    arrivedAt: Date,
    decision: Decision,
    decide: (kind: StatusKind, broken: RuleBreak | undefined) => void
  ): Promise<void> {
    const id = shape.attrs.id
    const name = signalNameOf(account)
    const sender = signalSenderFor(name.user, name.server, deviceId)
    const existing = this.states.get(id)
    const chunk = (existing?.record.chunks ?? 0) + 1
    const stanza: StatusStanza = {
      chunk,
      receivedAt: arrivedAt.toISOString(),
      tag: shape.tag === 'status' ? 'status' : 'message',
      attrs: shape.attrs,
      audience: shape.bare.map((t) => t.jid),
      devices: shape.devices.map((t) => t.jid),
      skdmDevices: shape.devices.filter((t) => t.enc).map((t) => t.jid),
      statusSetting: shape.statusSetting,
      ...(shape.mediatype !== undefined ? { mediatype: shape.mediatype } : {}),
      deviceIdentity: shape.deviceIdentity,
      accepted: false
    }

    const deliveries: StatusDelivery[] = []
    const messages: proto.Message[] = []
    const errors: string[] = []
    /** deliveries whose Signal message repeats a counter the device already used (see the merge below) */
    const repeats = new Set<StatusDelivery>()
    /** sender keys learnt from this stanza: kept by the devices only if the server accepted it */
    const learnt: { device: SimulatedDevice, skdm: Uint8Array }[] = []
    /** devices told to fail it: they ask for it again once it was recorded */
    const asks: RetryAsk[] = []
    if (!decision.broken) {
      const fanout = this.fanout(account, deviceId, shape)
      let count = 0
      for (const target of fanout) {
        if (++count % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve))
        if (decision.broken) break
        const result = await this.decryptFor(target, sender, shape.skmsg, chunk, id)
        deliveries.push(result.delivery)
        if (result.retry) asks.push(result.retry)
        if (result.oldCounter) repeats.add(result.delivery)
        if (result.skdm) {
          learnt.push(result.skdm)
          this.lastSenderKey.set(`${account.number}:${deviceId}`, Buffer.from(result.skdm.skdm))
        }
        if (!result.message) continue
        messages.push(result.message)
        // the content tells a post from a revoke (WA Web's revoke stanza looks like a post: see kindFromStanza)
        const kind = kindOfContent(normalizeMessageContent(result.message))
        decide(kind, kindRuleBroken(shape, account, kind))
        if (decision.broken) break
      }
      if (!fanout.length) errors.push(`chunk ${chunk}: no audience (no <to> in <participants>)`)
    }
    // nobody could read it: what the stanza shows decides (a post unless it says otherwise)
    decide('post', kindRuleBroken(shape, account, 'post'))
    const kind = decision.kind ?? 'post'
    const broken = decision.broken

    if (broken) {
      stanza.error = RULE_ERROR
      stanza.rule = broken.rule
      stanza.detail = broken.detail
      this.rejected.push({
        id, from: account.number, to: STATUS_JID, error: RULE_ERROR, at: arrivedAt.toISOString(), rule: broken.rule, detail: broken.detail, kind
      })
      this.logger.info({ id, number: account.number, rule: broken.rule }, 'status stanza NACKed 479')
      if (kind === 'revoke') return
      const state = existing ?? this.newState(id, account, deviceId, kind, arrivedAt)
      state.record.chunks = chunk
      state.record.stanzas.push(stanza)
      state.record.rejected ??= { error: RULE_ERROR, rule: broken.rule, detail: broken.detail, chunk }
      this.notify(state.record)
      return
    }
    stanza.accepted = true
    for (const { device, skdm } of learnt) device.rememberSenderKey(STATUS_JID, sender, skdm)

    const content = normalizeMessageContent(messages[0])
    // messageContextInfo (messageSecret…) is per generated message; chunks re-sent under one id may differ there
    const digests = new Set(
      messages.map((m) => createHash('sha256').update(proto.Message.encode({ ...m, messageContextInfo: null }).finish()).digest('hex'))
    )
    if (digests.size > 1) errors.push(`chunk ${chunk}: recipients decrypted different contents`)

    const revokedKey = content?.protocolMessage?.type === proto.Message.ProtocolMessage.Type.REVOKE ? content.protocolMessage.key : undefined
    if (revokedKey?.id) {
      this.applyRevoke(id, revokedKey.id, deliveries, arrivedAt)
      return
    }

    const state = existing ?? this.newState(id, account, deviceId, kind, arrivedAt)
    const { record } = state
    record.chunks = chunk
    record.stanzas.push(stanza)
    record.errors.push(...errors)
    if (!record.statusSetting && stanza.statusSetting) record.statusSetting = stanza.statusSetting
    // the users the post names (status-mentions.ts), as the first stanza carrying them lists them
    if (!record.mentionedUsers && shape.mentioned) record.mentionedUsers = [...shape.mentioned]
    for (const jid of stanza.skdmDevices) {
      if (!record.skdmDevices.includes(jid)) record.skdmDevices.push(jid)
    }
    for (const t of [...shape.bare, ...shape.devices]) {
      const user = `${t.user}@${t.server}`
      if (!state.audience.has(user)) {
        state.audience.add(user)
        record.audience.push(user)
      }
    }
    for (const delivery of deliveries) {
      record.deliveries.push(delivery)
      const key = `${delivery.number}:${delivery.device}`
      const again = state.addressed.has(key)
      if (repeats.has(delivery) && record.deliveries.some((d) => d.decrypted && d.number === delivery.number && d.device === delivery.device)) {
        // A device that decrypted this id before and gets it again under a Signal counter it already used (a
        // sender that lost its session state after sending, e.g. killed before its key store committed) drops
        // the copy and sends no retry receipt: whatsmeow's message.go ignores signalerror.ErrOldCounter
        // ("Ignoring message"), and Baileys rc14's messages-recv.js acks MISSING_KEYS_ERROR_TEXT ('Key used
        // already or never filled') without a retry. A device that never had this id: an error, it is lost.
        delivery.dropped = delivery.error
        delete delivery.error
      }
      if (delivery.error) record.errors.push(`${delivery.jid}: ${delivery.error}`)
      if (again) {
        if (!record.duplicateRecipients.includes(delivery.number)) record.duplicateRecipients.push(delivery.number)
      }
      state.addressed.add(key)
      if (!state.recipients.has(delivery.number)) {
        state.recipients.add(delivery.number)
        record.recipients.push(delivery.number)
      }
    }
    if (content) {
      const digest = [...digests][0]
      if (!state.contentDigest) {
        state.contentDigest = digest
        record.decrypted = true
        const secret = messages[0].messageContextInfo?.messageSecret
        record.messageSecret = secret instanceof Uint8Array && secret.length === 32
        if (record.messageSecret) this.secrets.set(id, Buffer.from(secret!))
        await this.describe(record, content)
      } else if (state.contentDigest !== digest) {
        record.errors.push(`chunk ${chunk}: content differs from the first chunk`)
      }
    }
    this.logger.debug({ id, chunk, recipients: record.recipients.length, type: record.type }, 'status recorded')
    this.askAgain(account, deviceId, record, asks, arrivedAt)
    this.notify(record)
    const pendingRevoke = [...this.revokes.values()].find((r) => r.targetId === id)
    if (pendingRevoke) this.markRevoked(record, pendingRevoke)
  }

  private newState (id: string, account: Account, deviceId: number, kind: StatusKind, arrivedAt: Date): StatusState {
    const state: StatusState = {
      record: {
        id,
        from: account.number,
        fromDevice: deviceId,
        kind: kind === 'reaction' ? 'reaction' : 'post',
        type: 'other',
        recipients: [],
        deliveries: [],
        receivedAt: arrivedAt.toISOString(),
        chunks: 0,
        duplicateRecipients: [],
        decrypted: false,
        errors: [],
        stanzas: [],
        audience: [],
        skdmDevices: [],
        retries: []
      },
      addressed: new Set(),
      recipients: new Set(),
      audience: new Set()
    }
    this.states.set(id, state)
    return state
  }

  /**
   * Every device the server delivers the skmsg to: all devices of every audience user (bare `<to>`
   * users plus users of device-level `<to>`s), the poster's own other devices included (its phone
   * shows the post under "My status"), except the device that sent it. Device-level `<to>`s of
   * devices that do not exist are listed too (as errors). Order: as the users first appear.
   */
  private fanout (poster: Account, sendingDevice: number, shape: StanzaShape): FanoutTarget[] {
    const targets: FanoutTarget[] = []
    const seen = new Set<string>()
    const addressed = new Map<string, StanzaTarget>()
    for (const t of shape.devices) addressed.set(`${t.user}@${t.server}:${t.device ?? 0}`, t)
    for (const t of [...shape.bare, ...shape.devices]) {
      const userKey = `${t.user}@${t.server}`
      if (seen.has(userKey)) continue
      seen.add(userKey)
      const party = this.directory.resolveUser(t.user, t.server)
      if (!party) {
        for (const d of shape.devices.filter((x) => `${x.user}@${x.server}` === userKey)) targets.push({ jid: d.jid, deviceId: d.device ?? 0, enc: d.enc })
        if (!shape.devices.some((x) => `${x.user}@${x.server}` === userKey)) targets.push({ jid: t.jid, deviceId: 0 })
        continue
      }
      const ids = party.deviceList().map((d) => d.id).filter((d) => !(party === poster && d === sendingDevice))
      for (const deviceId of ids) {
        const to = addressed.get(`${userKey}:${deviceId}`)
        targets.push({ jid: to?.jid ?? jidEncode(t.user, t.server as JidServer, deviceId), deviceId, enc: to?.enc, party })
      }
      // device-level <to>s for devices the user does not have; one for the sending device itself (rc14
      // addresses it when the own LID is in statusJidList) is left out like the server leaves it out
      for (const d of shape.devices) {
        const deviceId = d.device ?? 0
        if (`${d.user}@${d.server}` !== userKey || ids.includes(deviceId) || (party === poster && deviceId === sendingDevice)) continue
        targets.push({ jid: d.jid, deviceId, enc: d.enc, party })
      }
    }
    return targets
  }

  private async decryptFor (
    target: FanoutTarget,
    sender: SignalSender,
    skmsg: BinaryNode | undefined,
    chunk: number,
    statusId: string
  ): Promise<{
    delivery: StatusDelivery
    message?: proto.Message
    skdm?: { device: SimulatedDevice, skdm: Uint8Array }
    oldCounter?: boolean
    retry?: RetryAsk
  }> {
    const { jid, deviceId, enc, party } = target
    const delivery: StatusDelivery = {
      number: party?.number ?? jidDecode(jid)?.user ?? jid,
      device: deviceId,
      jid,
      chunk,
      encType: enc?.attrs.type ?? 'none',
      skdm: false,
      decrypted: false
    }
    const resolved = party ? this.directory.resolveDevice(party.number, 's.whatsapp.net', deviceId) : undefined
    if (!resolved) {
      delivery.error = party ? 'addressed device does not exist' : 'addressed user does not exist'
      return { delivery }
    }
    if (!resolved.simulated) {
      // a linked companion (e.g. another client under test): its private keys are not ours
      delivery.error = 'linked companion device, not decryptable by the emulator'
      return { delivery }
    }
    const device = resolved.simulated
    const type = enc?.attrs.type
    if (enc && (!(enc.content instanceof Uint8Array) || (type !== 'pkmsg' && type !== 'msg'))) {
      delivery.error = `unexpected <enc type=${type ?? '?'}>`
      return { delivery }
    }
    try {
      let direct: proto.Message | undefined
      let learnt: Uint8Array | undefined
      if (enc) {
        direct = await device.decrypt(sender, type as 'pkmsg' | 'msg', enc.content as Uint8Array)
        const distribution = direct.senderKeyDistributionMessage
        if (distribution?.axolotlSenderKeyDistributionMessage?.length) {
          learnt = distribution.axolotlSenderKeyDistributionMessage
          delivery.skdm = true
        }
      }
      // told to fail (failNextDecrypt): the pairwise message was read (its session stays in step), but the
      // device keeps neither the sender key nor the status, and asks for it again
      const failing = party ? device.failsStatus(statusId) : 0
      if (failing > 0) {
        // it lost the sender key (why a status fails to decrypt): an answer without an SKDM fails too
        device.forgetSenderKey(STATUS_JID, sender)
        delivery.skdm = learnt !== undefined
        delivery.retry = failing
        return { delivery, retry: { device, party: party!, count: failing } }
      }
      let message = direct
      if (skmsg) {
        // a device decrypts the skmsg only with a sender key it holds: from this stanza's SKDM or an earlier one
        const skdm = learnt ?? device.senderKeyFor(STATUS_JID, sender)
        if (!skdm) throw new Error('no sender key: no SKDM for this device in this or an earlier post')
        if (!(skmsg.content instanceof Uint8Array)) throw new Error('empty skmsg')
        message = await decryptSenderKeyMessage(STATUS_JID, sender, skdm, skmsg.content)
      }
      if (!message) throw new Error('nothing for this device (no <enc> and no skmsg)')
      delivery.decrypted = true
      return { delivery, message, skdm: learnt ? { device, skdm: learnt } : undefined }
    } catch (error) {
      delivery.error = `decrypt failed: ${(error as Error).message}`
      // libsignal's MessageCounterError: a message key of this session's chain already used
      return { delivery, oldCounter: (error as Error).name === 'MessageCounterError' }
    }
  }

  private async describe (record: StatusRecord, content: proto.IMessage): Promise<void> {
    let type: StatusType = 'other'
    if (content.extendedTextMessage) {
      const ext = content.extendedTextMessage
      type = 'text'
      record.text = ext.text ?? ''
      if (ext.backgroundArgb !== null && ext.backgroundArgb !== undefined) record.backgroundArgb = ext.backgroundArgb >>> 0
      if (ext.font !== null && ext.font !== undefined) record.font = ext.font
    } else if (typeof content.conversation === 'string') {
      type = 'text'
      record.text = content.conversation
    } else if (content.imageMessage) {
      type = 'image'
      if (content.imageMessage.caption) record.caption = content.imageMessage.caption
      record.media = await this.describeMedia(content.imageMessage, 'image', record)
    } else if (content.videoMessage) {
      type = 'video'
      if (content.videoMessage.caption) record.caption = content.videoMessage.caption
      record.media = await this.describeMedia(content.videoMessage, 'video', record)
    } else if (content.audioMessage) {
      // a voice note (ptt) or other audio: what a recipient plays, decrypted like image and video
      type = 'audio'
      const audio = content.audioMessage
      record.media = { ...await this.describeMedia(audio, 'audio', record), ptt: audio.ptt === true, ...(audio.seconds != null ? { seconds: audio.seconds } : {}) }
    }
    record.type = type
    // the mediatype the stanza announced must be the one WA Web gives this content (status-rules.ts expectedMediaType)
    const expected = expectedMediaType(content)
    const announced = record.stanzas.find((st) => st.accepted)?.mediatype
    if (expected !== undefined && announced !== expected) record.errors.push(`media: <enc mediatype="${announced ?? ''}"> for content WA Web sends as "${expected}"`)
  }

  private async describeMedia (
    message: proto.Message.IImageMessage | proto.Message.IVideoMessage | proto.Message.IAudioMessage,
    mediaType: MediaType,
    record: StatusRecord
  ): Promise<StatusMedia> {
    const declared: StatusMedia = {
      mimetype: message.mimetype ?? '',
      size: Number(message.fileLength ?? 0),
      sha256: b64(message.fileSha256),
      uploaded: false,
      verified: false,
      directPath: message.directPath ?? undefined
    }
    const upload = this.media.find({ directPath: message.directPath, url: message.url, fileEncSha256: message.fileEncSha256 })
    if (!upload) {
      record.errors.push('media: upload not found on the media server')
      return declared
    }
    if (!message.mediaKey?.length) {
      record.errors.push('media: message carries no mediaKey')
      return declared
    }
    try {
      const { plaintext, macValid } = await MediaServer.decrypt(upload.body, message.mediaKey, mediaType)
      const sha256 = createHash('sha256').update(plaintext).digest('base64')
      const verified = macValid && sha256 === declared.sha256 && upload.encSha256 === b64(message.fileEncSha256)
      if (!verified) record.errors.push('media: MAC or hash mismatch')
      return { ...declared, size: plaintext.length, sha256, uploaded: true, verified }
    } catch (error) {
      record.errors.push(`media: decrypt failed: ${(error as Error).message}`)
      return declared
    }
  }

  private applyRevoke (revokeId: string, targetId: string, deliveries: StatusDelivery[], at: Date): void {
    let revoke = this.revokes.get(revokeId)
    if (!revoke) {
      revoke = { revokeId, targetId, recipients: new Set() }
      this.revokes.set(revokeId, revoke)
    }
    for (const d of deliveries) {
      if (d.decrypted) revoke.recipients.add(d.number)
    }
    const target = this.states.get(targetId)
    if (!target) {
      this.logger.warn({ revokeId, targetId }, 'revoke for a status the emulator has not seen (yet)')
      return
    }
    target.record.revokedAt ??= at.toISOString()
    this.markRevoked(target.record, revoke)
  }

  private markRevoked (record: StatusRecord, revoke: RevokeState): void {
    record.revoked = true
    record.revokedAt ??= new Date().toISOString()
    record.revokeMessageId = revoke.revokeId
    record.revokedFor = [...revoke.recipients]
    this.notify(record)
  }
}
