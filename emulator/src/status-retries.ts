// StatusCenter, layer 3: status retry receipts and their answers (README "Rules": status retry receipts).
import { jidDecode, jidEncode, type BinaryNode } from '@whiskeysockets/baileys'
import { signalNameOf, type Account, type Party } from './accounts.js'
import { EmulatorError } from './errors.js'
import { bundleNode, signalSenderFor, type SimulatedDevice } from './signal-party.js'
import type { StanzaShape } from './status-rules.js'
import type { StatusRecord, StatusRetryRecord } from './types.js'
import { STATUS_JID, bigEndian, type Decision, type RetryAsk } from './status-book.js'
import { StatusDecryption } from './status-decryption.js'

/** Retry receipts: the devices told to fail ask again, and the poster's answers are checked against WA Web's. */
export abstract class StatusRetries extends StatusDecryption {
  /** The unanswered retries of this status whose device the stanza addresses: then it is an answer to them. */
  protected retryAnswerOf (poster: Account, shape: StanzaShape): StatusRetryRecord[] | undefined {
    const state = this.states.get(shape.attrs.id)
    if (!state || state.record.from !== poster.number) return undefined
    const pending = state.record.retries.filter((r) => !r.answered)
    if (!pending.length) return undefined
    const addressed = pending.filter((r) => shape.devices.some((t) => this.sameDevice(t, r)))
    return addressed.length ? addressed : undefined
  }

  protected sameDevice (target: { user: string, server: string, device?: number }, retry: StatusRetryRecord): boolean {
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
  protected async processRetryAnswer (
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
  protected askAgain (poster: Account, posterDevice: number, record: StatusRecord, asks: RetryAsk[], arrivedAt: Date): void {
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
}
