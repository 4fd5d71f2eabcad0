import { getBinaryNodeChildren, jidNormalizedUser, type BinaryNode } from '@whiskeysockets/baileys'
import { STATUS_JID } from '../jid.js'
import { pnDigits } from './lid.js'
import type { ReceiptSeen, StatusView } from './types.js'

// Reading the views out of a status receipt stanza. receipts.ts decides what to do with them: commit, then ack.
//
// Two forms reach us:
// - simple: `<receipt from="status@broadcast" id=STATUS type? participant=VIEWER>` with optional `<list><item
//   id=STATUS/>…</list>` naming more statuses; one type (none = delivery) for the whole stanza.
// - grouped (since 2026-09, tulir/whatsmeow #1270, with a capture): `<receipt class="status"
//   from="status@broadcast" id="SAGR…" t>` with no type, holding `<participants message_id=STATUS>` (the
//   older aggregated form names it `key`) and one `<user jid t type participant_pn?>` per viewer. The stanza
//   id is the receipt's own, not a status; the type is per user; viewers are LIDs, `participant_pn` their
//   number when the server adds it (oxidezap/whatsapp-rust wacore/src/stanza/receipt.rs parse_participants
//   reads the same attributes, and falls back to the stanza's type and `t` for a user without them).
//
// Two more things a receipt carries (oxidezap/whatsapp-rust wacore/src/stanza/receipt.rs):
// - `<error reason="lid" type="feature-incapable"/>` under the stanza: WA Web's receipt parser takes the
//   delivery as "sent", not delivered (the LID peer is feature-incapable and never received it), for the
//   stanza's type and every `<user>`'s delivery type alike (`downgrade_for_feature_incapable`, PR #708,
//   2026-06-04). Such deliveries are no deliveries here: left out (`notDelivered` tells the stanza).
// - a stanza-level `participant_pn` beside a simple receipt's `participant` (PR #724, 2026-06-05: "simple
//   receipt must thread receipt-level participant_pn"): the viewer's number, read like a `<user>`'s.

export type ParsedView = Omit<StatusView, 'viewerNumber' | 'isOwn'> & {
  /** digits of the viewer's `participant_pn` (a grouped receipt may name it beside the LID), else null */
  viewerPn: string | null
}
export type ParsedReceipt = Omit<ParsedView, 'type'> & { type: ReceiptSeen['type'] }

/** what a receipt type means for us; 'sender' (our own device echoing our send), 'retry' and others are nothing at all */
function receiptKind (type: string | undefined): ReceiptSeen['type'] | null {
  if (type === undefined || type === 'delivery') return 'delivery'
  if (type === 'read' || type === 'read-self') return 'read'
  if (type === 'played' || type === 'played-self') return 'played'
  return null
}

/** ms since epoch of a `t` attribute (unix seconds), else `fallback` */
function timeOf (t: string | undefined, fallback: number): number {
  const seconds = Number(t)
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : fallback
}

interface Viewer { jid: string, at: number, type: ReceiptSeen['type'], pn: string | null, ids: string[] }

/**
 * A status receipt of deliveries (no type, `delivery`, or the grouped form) that carries `<error reason="lid"
 * type="feature-incapable"/>`: its deliveries did not happen. Other types (read, retry…) are not downgraded.
 */
export function notDelivered (node: BinaryNode): boolean {
  const { attrs } = node
  if (node.tag !== 'receipt' || attrs.from !== STATUS_JID || receiptKind(attrs.type) !== 'delivery') return false
  const children = Array.isArray(node.content) ? node.content : []
  return children.some((c) => c.tag === 'error' && c.attrs.reason === 'lid' && c.attrs.type === 'feature-incapable')
}

/** digits of a `participant_pn` attribute, else null */
const pnOf = (pn: string | undefined): string | null => pnDigits(pn === undefined ? undefined : jidNormalizedUser(pn))

/**
 * Every (status, viewer) pair in a raw status receipt stanza, with its type: the simple form's `participant`
 * for the stanza `id` and every `<list>` item, and every `<user>` of each `<participants>` child for that
 * child's `message_id` (or `key`; without either, the stanza's ids). Own-device views included. Deliveries
 * come out as type 'delivery' (they are no views), except in a stanza that says they did not happen
 * (`notDelivered`); each (status, viewer, type) once.
 */
export function parseStatusReceipt (node: BinaryNode): ParsedReceipt[] {
  const { attrs } = node
  if (node.tag !== 'receipt' || attrs.from !== STATUS_JID || attrs.id === undefined) return []
  const stanzaType = receiptKind(attrs.type)
  if (stanzaType === null) return []
  const at = timeOf(attrs.t, Date.now())
  const children = Array.isArray(node.content) ? node.content : []
  const downgraded = notDelivered(node)

  const stanzaIds = [attrs.id]
  for (const list of children.filter((c) => c.tag === 'list')) {
    for (const item of getBinaryNodeChildren(list, 'item')) if (item.attrs.id !== undefined) stanzaIds.push(item.attrs.id)
  }
  const viewers: Viewer[] = []
  if (attrs.participant !== undefined) {
    viewers.push({ jid: jidNormalizedUser(attrs.participant), at, type: stanzaType, pn: pnOf(attrs.participant_pn), ids: stanzaIds })
  }
  for (const group of children.filter((c) => c.tag === 'participants')) {
    const groupId = group.attrs.message_id ?? group.attrs.key
    const ids = groupId === undefined || groupId === '' ? stanzaIds : [groupId]
    for (const user of getBinaryNodeChildren(group, 'user')) {
      const { jid, t, type, participant_pn: pn } = user.attrs
      if (jid === undefined) continue
      const kind = type === undefined ? stanzaType : receiptKind(type)
      if (kind === null) continue
      viewers.push({ jid: jidNormalizedUser(jid), at: timeOf(t, at), type: kind, pn: pnOf(pn), ids })
    }
  }

  const out: ParsedReceipt[] = []
  const seen = new Set<string>()
  for (const viewer of viewers) {
    if (viewer.jid === '' || (downgraded && viewer.type === 'delivery')) continue
    for (const messageId of viewer.ids) {
      const key = `${messageId}\n${viewer.jid}\n${viewer.type}`
      if (seen.has(key)) continue
      seen.add(key)
      out.push({ messageId, viewerJid: viewer.jid, type: viewer.type, at: viewer.at, viewerPn: viewer.pn })
    }
  }
  return out
}
