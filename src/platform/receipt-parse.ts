import { getBinaryNodeChildren, jidNormalizedUser, type BinaryNode } from '@whiskeysockets/baileys'
import type { ReceiptSeen, StatusView } from './types.js'

// Reading the views out of a status receipt stanza (the forms are described where each is read below).
// receipts.ts decides what to do with them: commit, then ack.

const STATUS_JID = 'status@broadcast'

export type ParsedView = Omit<StatusView, 'viewerNumber' | 'isOwn'>
export type ParsedReceipt = Omit<ParsedView, 'type'> & { type: ReceiptSeen['type'] }

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
