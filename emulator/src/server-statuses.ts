// EmulatorServer, layer 5: statuses taken and contacts' statuses given (statuses.ts, status-rules.ts, contact-statuses.ts).
import type { BinaryNode } from '@whiskeysockets/baileys'
import { normalizeNumber } from './accounts.js'
import { WaConnection } from './connection.js'
import { EmulatorError } from './errors.js'
import type { MediaUploadInfo } from './media-server.js'
import { checkContactStatus } from './contact-statuses.js'
import { RULE_ERROR } from './status-rules.js'
import { isPairwiseStatusReaction, statusReactionViolation } from './sent-to-contacts.js'
import type { DirectMessageRecord } from './status-mentions.js'
import { refuses } from './refusals.js'
import { ackClassOf, misaddressedStatus } from './publish-stanza.js'
import type { ContactInfo, FailDecryptOptions, ReceiptVia, RejectedMessage, StatusRecord, StatusRetryRecord } from './types.js'
import type { ContactStatusLog, SentToContact, ContactStatusOptions, ContactStatusResult } from './types-messages.js'
import { ReceiptServer } from './server-receipts.js'
import { STATUS_JID, DEFAULT_WAIT_MS, unixNow, contactInfo } from './server-base.js'

/**
 * Messages the account sends (its statuses to status@broadcast, likes, one-to-one messages), what was
 * recorded of them, and its contacts' statuses delivered to it.
 */
export abstract class StatusServer extends ReceiptServer {
  protected onMessage (conn: WaConnection, node: BinaryNode): void {
    const account = conn.account
    const device = conn.device
    if (!account || !device) return
    const id = node.attrs.id
    const to = node.attrs.to ?? ''
    // <status>: acked class="status", refused unless to status@broadcast (publish-stanza.ts)
    const ackClass = ackClassOf(node)
    const misaddressed = misaddressedStatus(node)
    if (misaddressed !== undefined) {
      conn.send({ tag: 'ack', attrs: { class: ackClass, id, from: to, t: unixNow(), error: String(RULE_ERROR) } })
      this.rejected.push({ id, from: account.number, to, error: RULE_ERROR, at: new Date().toISOString(), detail: misaddressed })
      return
    }
    const refusal = to === STATUS_JID ? account.statusRefusal : null
    const code = refusal === null ? undefined : refuses(refusal)
    if (refusal !== null && refusal.left === 0) account.statusRefusal = null
    if (code !== undefined) {
      // refused on request (refusals.ts): nacked at once, delivered to nobody, not recorded as a status
      conn.send({ tag: 'ack', attrs: { class: ackClass, id, from: to, t: unixNow(), error: String(code) } })
      this.rejected.push({ id, from: account.number, to, error: code, at: new Date().toISOString() })
      this.logger.info({ id, number: account.number, error: code, left: refusal?.left }, 'status stanza refused (on request)')
      return
    }
    if (to === STATUS_JID && isPairwiseStatusReaction(node)) {
      // a like of a contact's status (pairwise, no sender-key <enc>): its own rules, delivered to the author's
      // devices (sent-to-contacts.ts); a reaction under the status sender key goes the status rules' way
      const violation = statusReactionViolation(node, account, this.directory)
      if (violation !== null) {
        conn.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t: unixNow(), error: String(RULE_ERROR) } })
        this.rejected.push({ id, from: account.number, to, error: RULE_ERROR, at: new Date().toISOString() })
        this.sentToContactsLog.refused(account, node, violation)
        this.logger.info({ id, number: account.number, rule: violation.rule }, 'status reaction refused')
        return
      }
      conn.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t: unixNow() } })
      void this.sentToContactsLog.take(account, device.id, node)
    } else if (to === STATUS_JID) {
      // acked (or NACKed 479) once the rules are checked: status-rules.ts
      this.statusCenter.enqueue(account, device.id, node, new Date(), (broken) => {
        if (!conn.isOpen) return
        conn.send({ tag: 'ack', attrs: { class: ackClass, id, from: to, t: unixNow(), ...(broken ? { error: String(RULE_ERROR) } : {}) } })
      })
    } else {
      conn.send({ tag: 'ack', attrs: { class: 'message', id, from: to, t: unixNow(), ...this.staleLids.ackAttrs(this.directory, to) } })
      // rc14's answer to a status retry receipt goes to the requesting device itself (recorded as such); any
      // other: what a contact's devices decrypt of it (a status mention message…), after the status stanzas queued before it
      void this.statusCenter.directRetryAnswer(account, device.id, node, new Date()).then(async (answer) => {
        if (answer) return
        const taken = await this.statusCenter.afterQueued(async () => await this.inbox.take(account, device.id, node))
        if (taken === 0) this.logger.debug({ id, to }, 'non-status message acked, not recorded')
      }).catch((err: unknown) => { this.logger.warn({ id, to, err: (err as Error).message }, 'one-to-one message not decrypted') })
    }
  }

  /**
   * The contact's device fails to decrypt the next status(es) it receives (it lost the sender key) and sends
   * the poster a retry receipt for each (`<receipt type="retry">`, status-retries.ts askAgain); the answer is
   * recorded on the status (`retries`).
   */
  failNextDecrypt (number: string, options: FailDecryptOptions = {}): ContactInfo {
    const contact = this.directory.contact(number)
    const deviceId = options.device ?? 0
    const device = contact.devices.find((d) => d.deviceId === deviceId)
    if (!device) throw new EmulatorError(404, `${contact.number} has no device ${deviceId}`)
    const statuses = options.statuses ?? 1
    const times = options.times ?? 1
    if (!Number.isInteger(statuses) || statuses < 1 || statuses > 100) throw new EmulatorError(400, 'statuses must be an integer between 1 and 100')
    // a fifth retry is refused (WA Web's MAX_RETRY = 5: whatsapp-rust wacore/src/protocol/retry.rs MAX_RETRY_COUNT)
    if (!Number.isInteger(times) || times < 1 || times > 5) throw new EmulatorError(400, 'times must be an integer between 1 and 5')
    const via = options.via ?? 'lid'
    if (via !== 'pn' && via !== 'lid') throw new EmulatorError(400, 'via must be pn or lid')
    Object.assign(device, { failStatuses: statuses, failTimes: times, failVia: via })
    return contactInfo(contact)
  }

  /**
   * A contact's device asks for a status it received again now (a retry receipt with the next count), as if
   * its decrypt had failed late; delivered to the poster's device, or queued until it logs in.
   */
  requestStatusRetry (statusId: string, options: { number: string, device?: number, via?: ReceiptVia }): StatusRetryRecord {
    const contact = this.directory.contact(options?.number)
    const device = contact.devices.find((d) => d.deviceId === (options.device ?? 0))
    if (!device) throw new EmulatorError(404, `${contact.number} has no device ${options.device ?? 0}`)
    const via = options.via ?? 'lid'
    if (via !== 'pn' && via !== 'lid') throw new EmulatorError(400, 'via must be pn or lid')
    device.failVia = via
    return this.statusCenter.askAgainNow(statusId, contact, device)
  }

  /** The account gets one more device the emulator plays (another WA Web linked to the phone): it decrypts statuses sent to it. */
  addOwnDevice (number: string): { number: string, device: number, lidJid: string } {
    const account = this.directory.account(number)
    const device = account.addOwnDevice()
    return { number: account.number, device: device.deviceId, lidJid: `${account.lid}:${device.deviceId}@lid` }
  }

  statuses (): StatusRecord[] {
    return this.statusCenter.list()
  }

  status (id: string): StatusRecord {
    return this.statusCenter.get(id)
  }

  waitForStatus (predicate: (status: StatusRecord) => boolean, timeoutMs = DEFAULT_WAIT_MS): Promise<StatusRecord> {
    return this.statusCenter.waitFor(predicate, timeoutMs)
  }

  mediaUploads (): MediaUploadInfo[] {
    return this.media!.uploads()
  }

  rejectedMessages (): RejectedMessage[] {
    return [...this.rejected, ...this.statusCenter.rejected].sort((a, b) => a.at.localeCompare(b.at)).map((r) => ({ ...r }))
  }

  async postContactStatus (accountNumber: string, options: ContactStatusOptions): Promise<ContactStatusResult> {
    const account = this.directory.account(accountNumber)
    const post = checkContactStatus(options)
    const contact = this.directory.contact(normalizeNumber(options.from))
    // the parties a mention names, by LID (status-mentions.ts)
    if (post.mentions !== undefined) {
      post.mentioned = post.mentions.map((n) => {
        const party = this.directory.getByNumber(normalizeNumber(n))
        if (!party) throw new EmulatorError(404, `mentions: no account or contact ${n}`)
        return { number: party.number, lid: party.lid }
      })
    }
    const { id, nodes } = await this.contactStatuses.build(account, contact, post, (mediaType, body) => this.media!.store(mediaType, body))
    let deliveredTo = 0
    let queuedFor = 0
    const live = this.liveConnections(account)
    for (const { device, node } of nodes) {
      if (this.deliverToDevice(account, device, [node], live)) deliveredTo++
      else queuedFor++
    }
    this.logger.info({ id, from: contact.number, to: account.number, deliveredTo, queuedFor }, 'contact status delivered')
    return { id, deliveredTo, queuedFor }
  }

  sentToContacts (accountNumber: string): SentToContact[] {
    return this.sentToContactsLog.log(this.directory.account(accountNumber))
  }

  contactStatusLog (accountNumber: string): ContactStatusLog {
    return this.contactStatuses.log(this.directory.account(accountNumber))
  }

  /** The one-to-one messages accounts sent to the contact's devices, as each decrypted them (mention notices…). */
  directMessages (contactNumber: string): DirectMessageRecord[] {
    return this.inbox.list(this.directory.contact(contactNumber).number)
  }

  setStatusAckDeadline (ms: number): void {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 1) throw new EmulatorError(400, 'ms must be a positive number')
    this.contactStatuses.deadlineMs = ms
  }
}
