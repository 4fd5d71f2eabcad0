/**
 * Public types of what passes between the parties, as the library and control API take and answer it:
 * receipts, reactions and replies, acks and replaced logins, contacts' statuses and what the account sends
 * its contacts. The rest (options, accounts, statuses) are in types.ts.
 */
import type { ReceiptType, ReceiptVia } from './types.js'

/** What a simple-form receipt carries besides the viewer (`sendView`, `sendViews`). */
export interface ReceiptExtras {
  /**
   * a stanza-level `participant_pn="<number>@s.whatsapp.net"` beside the LID `participant` (needs `via: 'lid'`;
   * oxidezap/whatsapp-rust PR #724)
   */
  participantPn?: boolean
  /**
   * `<error reason="lid" type="feature-incapable"/>` in the stanza: a delivery that did not happen (needs type
   * `delivery`; oxidezap/whatsapp-rust `downgrade_for_feature_incapable`, PR #708)
   */
  featureIncapable?: boolean
}

export interface ViewOptions extends ReceiptExtras {
  viewer: string
  type?: ReceiptType
  via?: ReceiptVia
  /** skip the checks that the viewer received the status and that it was not revoked */
  force?: boolean
}

export interface BulkViewOptions extends ReceiptExtras {
  viewers: string[]
  type?: ReceiptType
  via?: ReceiptVia
  /**
   * one stanza per viewer covering this status and `alsoStatusIds` as `<list><item id/></list>`
   * (the only multi-item receipt form Baileys parses); default false = one stanza per viewer and status
   */
  grouped?: boolean
  alsoStatusIds?: string[]
  force?: boolean
}

/** One viewer in a grouped receipt (`Emulator.sendGroupedReceipts`). */
export interface GroupedReceiptViewer {
  /** the viewer's number (contact or account) */
  viewer: string
  /** this viewer's receipt type (default: the call's `type`, else read) */
  type?: ReceiptType
  /** add `participant_pn="<number>@s.whatsapp.net"` beside the LID */
  participantPn?: boolean
  /** the viewer's `t` (unix seconds; default now) */
  t?: number
}

export interface GroupedReceiptOptions {
  /** numbers (taking `type`) or per-viewer specs, in stanza order */
  viewers: (string | GroupedReceiptViewer)[]
  /** type of viewers given as plain numbers (default read) */
  type?: ReceiptType
  /** viewers per `<receipt>` stanza (default: all in one) */
  perStanza?: number
  /** skip the checks that each viewer received the status and that it was not revoked */
  force?: boolean
  /**
   * `<error reason="lid" type="feature-incapable"/>` in each stanza: its `delivery` users were not reached
   * (oxidezap/whatsapp-rust applies it to every `<user>` of type delivery, PR #708)
   */
  featureIncapable?: boolean
}

export interface GroupedReceiptsResult extends SendViewsResult {
  /** the `<receipt id>`s sent (`SAGR…`), one per stanza */
  ids: string[]
}

/** A contact's reaction to (`emoji`) or reply to (`text`) a status, sent 1:1 to the poster's linked devices. */
export interface InteractionOptions {
  /** the contact's number */
  from: string
  /** reactions: the emoji; an empty string takes the reaction back */
  emoji?: string
  /** replies: the text */
  text?: string
  /** how the sender (and the poster inside the message) is addressed: phone number (default) or LID */
  via?: ReceiptVia
  /** which of the contact's devices sends it (default 0, its phone) */
  device?: number
  /** skip the checks that the contact received the status and that it was not revoked */
  force?: boolean
  /**
   * reactions: `direct` (default), a 1:1 message from the contact's device; `status`, WA Web's E2EE status like,
   * delivered from status@broadcast with the contact as participant (interactions.ts)
   */
  form?: 'direct' | 'status'
  /** reactions: an encReactionMessage sealed with the status' messageSecret (interactions.ts) */
  encrypted?: boolean
}

export interface InteractionResult {
  sent: true
  /** the platform message id of the reaction / reply */
  messageId: string
  /** linked devices it went to right away */
  deliveredTo: number
  /** linked devices that were offline: delivered at their next login */
  queuedFor: number
}

export interface SendViewsResult {
  sent: true
  /** receipt stanzas written (per connected device) or queued */
  stanzas: number
  /** linked devices the stanzas went to right away */
  deliveredTo: number
  /** linked devices that were offline: stanzas are kept and delivered (offline) at their next login */
  queuedFor: number
}

/**
 * Acks on one logged-in connection of a linked device (`Emulator.ackStats`). A stanza that expects an
 * `<ack>` (receipt, message) stays unacked for its device until the ack comes; what a connection
 * leaves unacked is delivered again, same ids and content, when the device logs in next.
 */
/** A login that replaced a still-open connection of the same linked device (`Emulator.replacedLogins`). */
export interface ReplacedLogin {
  number: string
  /** linked device id */
  device: number
  /** the connection ended with `stream:error 440 conflict replaced` */
  replaced: number
  /** the connection whose login replaced it */
  by: number
  at: string
}

export interface ConnectionAckStats {
  /** the emulator's id of the connection (increasing) */
  connection: number
  /** linked device id */
  device: number
  connected: boolean
  /** login time */
  openedAt: string
  closedAt?: string
  /** stanzas expecting an ack written on this connection: new traffic, the offline queue and redeliveries */
  delivered: number
  /** of `delivered`: left unacked by an earlier connection and delivered again here */
  redelivered: number
  /** acks received that matched a stanza still unacked (nacks, acks with `error`, included) */
  acked: number
  /** of `acked`: acks with an `error` attribute */
  nacked: number
  /** acks that matched nothing unacked (e.g. a second ack for the same stanza) */
  unmatched: number
  /** delivered here and not acked (yet, or before the connection closed) */
  unacked: number
}

/** A contact posts a status (`postContactStatus`): text, or media (random bytes of `size`, encrypted and hosted). */
export interface ContactStatusOptions {
  /** the contact's number */
  from: string
  text?: string
  media?: { mimetype?: string, size?: number, caption?: string }
  /** no sender-key distribution even for a device that lacks the key (as after it lost it): such a device cannot decrypt it */
  withoutKey?: boolean
  /**
   * numbers the status mentions (accounts or contacts, 1 to 5): the stanza carries `<meta><mentioned_users>`, and
   * `status_mentioned="true"` for an account it names (WASmaxInStatusDeliverStatusEncMentionedMixin)
   */
  mentions?: string[]
  /** a group status: posted in this group (`…@g.us`), delivered `<status from=group>`, wrapped in groupStatusMessageV2 */
  group?: string
}

export interface ContactStatusResult {
  /** the stanza id (`3A…`, as a phone's) */
  id: string
  /** linked devices it was written to now */
  deliveredTo: number
  /** linked devices that get it at their next login */
  queuedFor: number
}

/** One linked device's copy of a contact's `<status>` stanza. */
export interface ContactStatusDelivery {
  device: number
  /** the `<enc>` types it carried: `pkmsg`/`msg` (the sender key distribution) only the first time, then `skmsg` */
  encTypes: string[]
  /** times written to the device (the first delivery and each redelivery) */
  delivered: number
  /** times written again at a login because it was still unacked */
  redelivered: number
  acked: boolean
  ackedAt?: string
  /** the attributes of the `<ack>` that matched it */
  ack?: Record<string, string>
}

/** A `<receipt to="status@broadcast">` a linked device sent for a contact's status. */
export interface ContactStatusReceipt {
  at: string
  device: number
  /** the receipt's `type` (`delivery` when it has none) */
  type: string
  attrs: Record<string, string>
}

export interface ContactStatusInfo {
  id: string
  /** the account it was delivered to */
  to: string
  /** the contact's number and LID */
  from: string
  fromLid: string
  /** the stanza's `participant` (`<lid>@lid`; `<number>@s.whatsapp.net` for a legacy contact) */
  participant: string
  type: 'text' | 'media'
  text?: string
  caption?: string
  media?: { mimetype: string, size: number }
  postedAt: string
  /** the numbers it mentions (`mentions`) */
  mentions?: string[]
  /** the group of a group status */
  group?: string
  deliveries: ContactStatusDelivery[]
  receipts: ContactStatusReceipt[]
}

/** What an account was sent of its contacts' statuses, and how its linked devices answered. */
export interface ContactStatusLog {
  ackDeadlineMs: number
  statuses: ContactStatusInfo[]
  /** `<stream:error><ack class="status" …/></stream:error>` sent: a status stanza went unacked past the deadline */
  streamErrors: Array<{ at: string, device: number, connection: number, ack: Record<string, string> }>
  /** acks with `class="status"` or `to="status@broadcast"` that matched no stanza waiting for one (e.g. a wrong attribute) */
  unmatchedAcks: Array<{ at: string, device: number, attrs: Record<string, string> }>
}

/** One recipient device's reading of what the account sent a contact (sent-to-contacts.ts). */
export interface SentToContactDelivery {
  number: string
  device: number
  jid: string
  encType: string
  decrypted: boolean
  /** the decrypted message (proto.Message as JSON: bytes base64, longs numbers) */
  message?: Record<string, unknown>
  /** why the device could not read it, or dropped it */
  error?: string
}

/** Something the account sent a contact: a like of their status (E2EE reaction to status@broadcast) or a 1:1 message. */
export interface SentToContact {
  id: string
  kind: 'status-reaction' | 'message'
  /** the contact's number (the status' author for a reaction); null when no contact was addressed */
  to: string | null
  /** the stanza's `type` */
  type: string
  at: string
  /** refused by a rule (sent-to-contacts.ts): NACKed, delivered to nobody */
  refused?: { error: number, rule: string, reason: string }
  deliveries: SentToContactDelivery[]
  /** the recipient's devices the stanza did not address */
  missingDevices: number[]
  /** the copies for the sender's own other devices the emulator plays (its phone), as they decrypted them (a DeviceSentMessage) */
  ownCopies: SentToContactDelivery[]
}
