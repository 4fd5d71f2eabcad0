/**
 * Acknowledgements, as the platform keeps them: every stanza delivered to a linked device that the
 * client must answer with `<ack class=… id=…>` (receipts, messages, …) stays pending for that device
 * until the ack comes; what is still pending when the connection goes away is delivered again, same
 * ids and content, when the same device logs in next. Acks are counted per connection.
 */
import { getBinaryNodeChild, getBinaryNodeChildren, type BinaryNode } from '@whiskeysockets/baileys'
import type { ConnectionAckStats } from './types-messages.js'

/**
 * Stanzas the client acknowledges with `<ack class=tag>` (Baileys: `sendMessageAck` in messages-recv), and a
 * contact's `<status>`, acked `<ack class="status">` (oxidezap/whatsapp-rust PR #1101; see contact-statuses.ts).
 */
const ACKED_TAGS: ReadonlySet<string> = new Set(['receipt', 'message', 'notification', 'call', 'status'])
/** Unacked stanzas kept per device; oldest dropped beyond this (as the offline queue). */
const UNACKED_LIMIT = 100_000
/** Closed connections whose counters are still reported per device. */
const HISTORY_LIMIT = 20

/** Counters of one logged-in connection; `closedAt` is set when it goes away. */
export interface AckCounters extends Omit<ConnectionAckStats, 'connected' | 'openedAt' | 'closedAt'> {
  openedAt: Date
  closedAt?: Date
}

export function newAckCounters (connection: number, device: number): AckCounters {
  return { connection, device, openedAt: new Date(), delivered: 0, redelivered: 0, acked: 0, nacked: 0, unmatched: 0, unacked: 0 }
}

export function publicAckStats (counters: AckCounters): ConnectionAckStats {
  const { openedAt, closedAt, ...rest } = counters
  return { ...rest, connected: !closedAt, openedAt: openedAt.toISOString(), ...(closedAt ? { closedAt: closedAt.toISOString() } : {}) }
}

/** The client must acknowledge this stanza. */
export function expectsAck (node: BinaryNode): boolean {
  return ACKED_TAGS.has(node.tag) && typeof node.attrs.id === 'string' && node.attrs.id !== ''
}

// Baileys' buildAckStanza echoes the stanza's id, its `from` as `to`, its tag as `class`, and
// participant, recipient and type when present: the same fields identify the stanza on both sides
// (one status id gets receipts from many viewers, so the id alone does not).
const key = (tag: string, id: string, from?: string, participant?: string, recipient?: string, type?: string) =>
  `${tag}\u0000${id}\u0000${from ?? ''}\u0000${participant ?? ''}\u0000${recipient ?? ''}\u0000${type ?? ''}`

const stanzaKey = ({ tag, attrs }: BinaryNode) => key(tag, attrs.id, attrs.from, attrs.participant, attrs.recipient, attrs.type)
const ackKey = ({ attrs }: BinaryNode) => key(attrs.class ?? '', attrs.id ?? '', attrs.to, attrs.participant, attrs.recipient, attrs.type)

interface Pending {
  key: string
  node: BinaryNode
  /** the connection it was last delivered on */
  counters: AckCounters
}

/** Unacked stanzas of one linked device, oldest first, and the ack counters of its connections. */
export class AckLedger {
  private nextSeq = 0
  private readonly pending = new Map<number, Pending>()
  /** key → sequence numbers, oldest first (the same stanza may be pending twice) */
  private readonly byKey = new Map<string, number[]>()
  private readonly history: AckCounters[] = []
  /** `<message>` stanzas by id: the client answers those with a `<receipt>`, which acks them */
  private readonly messages = new Map<string, number[]>()

  get size (): number {
    return this.pending.size
  }

  /** Counters of the device's connections, oldest first (the open one last). */
  connections (): AckCounters[] {
    return this.history
  }

  /** A new logged-in connection of the device: start its counters. */
  open (counters: AckCounters): void {
    this.history.push(counters)
    if (this.history.length > HISTORY_LIMIT) this.history.splice(0, this.history.length - HISTORY_LIMIT)
  }

  /** `nodes` were written on the connection counted by `counters`; keep those that expect an ack. */
  delivered (nodes: readonly BinaryNode[], counters: AckCounters): void {
    for (const node of nodes) {
      if (!expectsAck(node)) continue
      const seq = this.nextSeq++
      const entry: Pending = { key: stanzaKey(node), node, counters }
      this.pending.set(seq, entry)
      const seqs = this.byKey.get(entry.key)
      if (seqs) seqs.push(seq)
      else this.byKey.set(entry.key, [seq])
      if (node.tag === 'message') {
        const ids = this.messages.get(node.attrs.id)
        if (ids) ids.push(seq)
        else this.messages.set(node.attrs.id, [seq])
      }
      counters.delivered++
      counters.unacked++
    }
    while (this.pending.size > UNACKED_LIMIT) {
      const [oldest] = this.pending.keys()
      this.remove(oldest)!.counters.unacked--
    }
  }

  /** An `<ack>` arrived on the connection counted by `counters`: the oldest matching stanza is done. */
  ack (node: BinaryNode, counters: AckCounters): boolean {
    return this.ackedStanza(node, counters) !== undefined
  }

  /** As `ack`, returning the stanza it acknowledged (undefined: it matched none). */
  ackedStanza (node: BinaryNode, counters: AckCounters): BinaryNode | undefined {
    const seqs = this.byKey.get(ackKey(node))
    if (!seqs?.length) {
      counters.unmatched++
      return undefined
    }
    const entry = this.remove(seqs[0])!
    entry.counters.unacked--
    counters.acked++
    if (node.attrs.error) counters.nacked++
    return entry.node
  }

  /** `node` (this very stanza) is still waiting for its ack; `counters`: and it was last delivered on that connection. */
  isPending (node: BinaryNode, counters?: AckCounters): boolean {
    return (this.byKey.get(stanzaKey(node)) ?? []).some((seq) => {
      const entry = this.pending.get(seq)
      return entry?.node === node && (counters === undefined || entry.counters === counters)
    })
  }

  /**
   * A `<receipt>` from the client: as on the platform, a delivery (or read, inactive…) receipt for a
   * message is its acknowledgement (Baileys' handleMessage answers a message with sendReceipt, not
   * `<ack>`); a `retry` receipt acks it as failed. Receipts for other stanzas match nothing.
   */
  receipt (node: BinaryNode, counters: AckCounters): number {
    const ids = [node.attrs.id, ...getBinaryNodeChildren(getBinaryNodeChild(node, 'list'), 'item').map((i) => i.attrs.id)]
    let matched = 0
    for (const id of ids) {
      const seqs = id === undefined ? undefined : this.messages.get(id)
      const seq = seqs?.find((s) => this.pending.get(s)?.node.attrs.from === node.attrs.to) ?? seqs?.[0]
      if (seq === undefined) continue
      const entry = this.remove(seq)!
      entry.counters.unacked--
      counters.acked++
      if (node.attrs.type === 'retry') counters.nacked++
      matched++
    }
    return matched
  }

  /**
   * Everything still unacked, oldest first, to deliver again on a new connection (the original
   * stanzas, same ids and content); from now on it is counted as delivered on that connection.
   * The counters of the connection that lost them keep their `unacked` as it was when it closed.
   */
  redeliver (counters: AckCounters): BinaryNode[] {
    const nodes: BinaryNode[] = []
    for (const entry of this.pending.values()) {
      entry.counters = counters
      nodes.push(entry.node)
    }
    counters.delivered += nodes.length
    counters.redelivered += nodes.length
    counters.unacked += nodes.length
    return nodes
  }

  /** The device was removed (logout): nothing is delivered to it any more. */
  clear (): void {
    this.pending.clear()
    this.byKey.clear()
    this.messages.clear()
  }

  private remove (seq: number): Pending | undefined {
    const entry = this.pending.get(seq)
    if (!entry) return undefined
    this.pending.delete(seq)
    const seqs = this.byKey.get(entry.key)!
    if (seqs.length === 1) this.byKey.delete(entry.key)
    else seqs.splice(seqs.indexOf(seq), 1)
    if (entry.node.tag === 'message') {
      const ids = this.messages.get(entry.node.attrs.id) ?? []
      if (ids.length <= 1) this.messages.delete(entry.node.attrs.id)
      else ids.splice(ids.indexOf(seq), 1)
    }
    return entry
  }
}
