// EmulatorServer, layer 4: receipts, reactions, replies (grouped-receipts.ts, interactions.ts).
import { randomBytes } from 'node:crypto'
import type { BinaryNode } from '@whiskeysockets/baileys'
import { normalizeNumber } from './accounts.js'
import { EmulatorError } from './errors.js'
import { encryptInteraction, prepareInteraction, type InteractionKind } from './interactions.js'
import { groupedReceiptNodes } from './grouped-receipts.js'
import type { ReceiptType, ReceiptVia } from './types.js'
import type {
  BulkViewOptions,
  GroupedReceiptOptions,
  GroupedReceiptsResult,
  InteractionOptions,
  InteractionResult,
  SendViewsResult,
  ViewOptions
} from './types-messages.js'
import { PhoneServer } from './server-phone.js'
import { STATUS_JID, unixNow } from './server-base.js'

const RECEIPT_TYPES: readonly ReceiptType[] = ['read', 'played', 'delivery']

/** What contacts send back about a status: view receipts (simple and grouped), reactions and replies; LIDs revealed. */
export abstract class ReceiptServer extends PhoneServer {
  sendView (statusId: string, options: ViewOptions): Promise<SendViewsResult> {
    return this.sendViews(statusId, {
      viewers: [options?.viewer],
      type: options?.type,
      via: options?.via,
      force: options?.force,
      participantPn: options?.participantPn,
      featureIncapable: options?.featureIncapable
    })
  }

  async sendViews (statusId: string, options: BulkViewOptions): Promise<SendViewsResult> {
    const status = this.statusCenter.get(statusId)
    const type: ReceiptType = options?.type ?? 'read'
    const via: ReceiptVia = options?.via ?? 'pn'
    if (!RECEIPT_TYPES.includes(type)) throw new EmulatorError(400, `type must be one of ${RECEIPT_TYPES.join(', ')}`)
    if (via !== 'pn' && via !== 'lid') throw new EmulatorError(400, 'via must be pn or lid')
    // oxidezap/whatsapp-rust PR #724 (2026-06-05): a simple receipt carries the LID participant's number as a
    // stanza-level participant_pn; PR #708 (2026-06-04): <error reason="lid" type="feature-incapable"/> on a
    // delivery receipt means the LID peer never received it (WA Web shows it as sent, not delivered)
    if (options.participantPn !== undefined && typeof options.participantPn !== 'boolean') throw new EmulatorError(400, 'participantPn must be a boolean')
    if (options.participantPn === true && via !== 'lid') throw new EmulatorError(400, "participantPn needs via 'lid' (it names the LID participant's number)")
    if (options.featureIncapable !== undefined && typeof options.featureIncapable !== 'boolean') throw new EmulatorError(400, 'featureIncapable must be a boolean')
    if (options.featureIncapable === true && type !== 'delivery') throw new EmulatorError(400, "featureIncapable needs type 'delivery' (the only receipt that carries it)")
    if (!Array.isArray(options?.viewers) || options.viewers.length === 0) throw new EmulatorError(400, 'viewers must be a non-empty array')
    const also = options.alsoStatusIds ?? []
    if (!Array.isArray(also)) throw new EmulatorError(400, 'alsoStatusIds must be an array')
    const others = also.map((id) => this.statusCenter.get(id))
    if (others.some((s) => s.from !== status.from)) throw new EmulatorError(400, 'alsoStatusIds must be statuses of the same account')
    const author = this.directory.account(status.from)
    const allStatuses = [status, ...others]
    const t = unixNow()
    const nodes: BinaryNode[] = []
    for (const rawViewer of options.viewers) {
      const number = normalizeNumber(rawViewer)
      const viewer = this.directory.getByNumber(number)
      if (!viewer) throw new EmulatorError(404, `unknown viewer ${number}`)
      if (!options.force) {
        for (const s of allStatuses) {
          if (!s.recipients.includes(number)) throw new EmulatorError(400, `${number} did not receive status ${s.id}`)
          if (s.revoked) throw new EmulatorError(409, `status ${s.id} was revoked`)
          // a viewer whose every device failed to read it (asked for it again, unanswered) cannot have seen it
          const own = s.deliveries.filter((d) => d.number === number)
          if (own.length > 0 && own.some((d) => d.retry !== undefined) && !own.some((d) => d.decrypted)) {
            throw new EmulatorError(409, `${number} could not decrypt status ${s.id} (its retry was not answered the WA Web way)`)
          }
        }
      }
      const participant = via === 'lid' ? `${viewer.lid}@lid` : `${viewer.number}@s.whatsapp.net`
      const pn: Record<string, string> = options.participantPn === true ? { participant_pn: `${viewer.number}@s.whatsapp.net` } : {}
      const error: BinaryNode[] = options.featureIncapable === true ? [{ tag: 'error', attrs: { reason: 'lid', type: 'feature-incapable' } }] : []
      const receipt = (id: string, content: BinaryNode[] = []): BinaryNode => ({
        tag: 'receipt',
        attrs: { from: STATUS_JID, participant, ...pn, id, t, ...(type === 'delivery' ? {} : { type }) },
        ...(content.length + error.length > 0 ? { content: [...content, ...error] } : {})
      })
      if (options.grouped && also.length) {
        nodes.push(receipt(status.id, [{ tag: 'list', attrs: {}, content: also.map((id) => ({ tag: 'item', attrs: { id } })) }]))
      } else {
        for (const s of allStatuses) nodes.push(receipt(s.id))
      }
    }
    return this.deliverToAccount(author, nodes)
  }

  async sendGroupedReceipts (statusId: string, options: GroupedReceiptOptions): Promise<GroupedReceiptsResult> {
    const status = this.statusCenter.get(statusId)
    const author = this.directory.account(status.from)
    const { nodes, ids } = groupedReceiptNodes(this.directory, status, options)
    return { ...this.deliverToAccount(author, nodes), ids }
  }

  async react (statusId: string, options: InteractionOptions): Promise<InteractionResult> {
    return await this.sendInteraction(statusId, 'reaction', options)
  }

  async reply (statusId: string, options: InteractionOptions): Promise<InteractionResult> {
    return await this.sendInteraction(statusId, 'reply', options)
  }

  /** Encrypted per linked device of the poster; offline devices get it at their next login. */
  protected async sendInteraction (statusId: string, kind: InteractionKind, options: InteractionOptions): Promise<InteractionResult> {
    const prepared = prepareInteraction(this.directory, this.statusCenter.get(statusId), kind, options, this.statusCenter.secretOf(statusId))
    const companions = prepared.poster.activeCompanions()
    const nodes = await encryptInteraction(prepared, companions.map((d) => ({ deviceId: d.id, bundle: () => d.takeBundle() })), unixNow())
    let deliveredTo = 0
    let queuedFor = 0
    const live = this.liveConnections(prepared.poster)
    for (const { deviceId, node } of nodes) {
      const device = companions.find((d) => d.id === deviceId)!
      if (this.deliverToDevice(prepared.poster, device, [node], live)) deliveredTo++
      else queuedFor++
    }
    this.logger.info({ statusId, kind, from: prepared.contact.number, via: prepared.via, id: prepared.messageId }, `status ${kind} sent`)
    return { sent: true, messageId: prepared.messageId, deliveredTo, queuedFor }
  }

  revealLid (contactNumber: string, options: { to: string }): SendViewsResult {
    const contact = this.directory.contact(contactNumber)
    const account = this.directory.account(options?.to)
    const payload = { data: { xwa2_notify_linked_profiles: { jid: `${contact.lid}@lid`, added_profiles: [{ pn: `${contact.number}@s.whatsapp.net` }] } } }
    const node: BinaryNode = {
      tag: 'notification',
      attrs: { from: 's.whatsapp.net', type: 'mex', id: randomBytes(8).toString('hex').toUpperCase(), t: unixNow() },
      content: [{ tag: 'update', attrs: { op_name: 'NotificationLinkedProfilesUpdates' }, content: Buffer.from(JSON.stringify(payload)) }]
    }
    this.logger.info({ contact: contact.number, lid: contact.lid, to: account.number }, 'LID revealed')
    return this.deliverToAccount(account, [node])
  }
}
