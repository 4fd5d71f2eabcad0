/**
 * View receipts in the grouped form (tulir/whatsmeow #1270, a capture from 2026-09):
 *
 *   <receipt class="status" from="status@broadcast" id="SAGR…" t="…">
 *     <participants message_id="3EB0…">
 *       <user jid="…@lid" t="…" type="delivery|read|played" [participant_pn="…@s.whatsapp.net"]/>
 *     </participants>
 *   </receipt>
 *
 * No `type` on the stanza; the status id is `message_id` on `<participants>`; one type per `<user>`.
 * `participant_pn` is what oxidezap/whatsapp-rust's parser reads beside `jid` (wacore/src/stanza/receipt.rs
 * parse_participants); the #1270 capture itself shows none. The client acks it with
 * `<ack class="receipt" id="SAGR…" to="status@broadcast"/>` (whatsmeow receipt.go sendAck, Baileys rc14
 * Utils/stanza-ack.js buildAckStanza: no participant, no type), which acks.ts matches.
 */
import { randomBytes } from 'node:crypto'
import type { BinaryNode } from '@whiskeysockets/baileys'
import { normalizeNumber, type Directory } from './accounts.js'
import { EmulatorError } from './errors.js'
import type { ReceiptType, StatusRecord } from './types.js'
import type { GroupedReceiptOptions, GroupedReceiptViewer } from './types-messages.js'

const STATUS_JID = 'status@broadcast'
const RECEIPT_TYPES: readonly ReceiptType[] = ['read', 'played', 'delivery']
const MAX_VIEWERS = 100_000

/** A receipt id like the capture's (`SAGR` + hex). */
const receiptId = () => `SAGR${randomBytes(10).toString('hex').toUpperCase()}`

export function groupedReceiptNodes (directory: Directory, status: StatusRecord, options: GroupedReceiptOptions): { nodes: BinaryNode[], ids: string[] } {
  if (options === null || typeof options !== 'object') throw new EmulatorError(400, 'a JSON body is required')
  const defaultType = options.type ?? 'read'
  if (!RECEIPT_TYPES.includes(defaultType)) throw new EmulatorError(400, `type must be one of ${RECEIPT_TYPES.join(', ')}`)
  if (!Array.isArray(options.viewers) || options.viewers.length === 0 || options.viewers.length > MAX_VIEWERS) {
    throw new EmulatorError(400, `viewers must be a non-empty array (at most ${MAX_VIEWERS})`)
  }
  const perStanza = options.perStanza ?? options.viewers.length
  if (!Number.isInteger(perStanza) || perStanza < 1) throw new EmulatorError(400, 'perStanza must be a positive integer')
  if (options.force !== true && status.revoked) throw new EmulatorError(409, `status ${status.id} was revoked`)
  if (options.featureIncapable !== undefined && typeof options.featureIncapable !== 'boolean') throw new EmulatorError(400, 'featureIncapable must be a boolean')
  // <error reason="lid" type="feature-incapable"/> beside <participants>: its delivery users were not reached
  // (oxidezap/whatsapp-rust src/receipt.rs applies the stanza's error to each <user> of type delivery, PR #708)
  const error: BinaryNode[] = options.featureIncapable === true ? [{ tag: 'error', attrs: { reason: 'lid', type: 'feature-incapable' } }] : []
  const now = Math.floor(Date.now() / 1000)
  const users: BinaryNode[] = options.viewers.map((entry) => {
    const spec: GroupedReceiptViewer = typeof entry === 'object' && entry !== null ? entry : { viewer: entry }
    const number = normalizeNumber(spec.viewer)
    const viewer = directory.getByNumber(number)
    if (!viewer) throw new EmulatorError(404, `unknown viewer ${number}`)
    if (options.force !== true && !status.recipients.includes(number)) throw new EmulatorError(400, `${number} did not receive status ${status.id}`)
    const type = spec.type ?? defaultType
    if (!RECEIPT_TYPES.includes(type)) throw new EmulatorError(400, `type must be one of ${RECEIPT_TYPES.join(', ')}`)
    if (spec.t !== undefined && (!Number.isInteger(spec.t) || spec.t < 0)) throw new EmulatorError(400, 't must be a unix time in seconds')
    if (spec.participantPn !== undefined && typeof spec.participantPn !== 'boolean') throw new EmulatorError(400, 'participantPn must be a boolean')
    // viewers are named by LID (#1270), participant_pn beside it when asked for
    const attrs: Record<string, string> = { jid: `${viewer.lid}@lid`, t: String(spec.t ?? now), type }
    if (spec.participantPn === true) attrs.participant_pn = `${viewer.number}@s.whatsapp.net`
    return { tag: 'user', attrs }
  })
  const nodes: BinaryNode[] = []
  for (let i = 0; i < users.length; i += perStanza) {
    nodes.push({
      tag: 'receipt',
      attrs: { class: 'status', from: STATUS_JID, id: receiptId(), t: String(now) },
      content: [{ tag: 'participants', attrs: { message_id: status.id }, content: users.slice(i, i + perStanza) }, ...error]
    })
  }
  return { nodes, ids: nodes.map((n) => n.attrs.id) }
}
