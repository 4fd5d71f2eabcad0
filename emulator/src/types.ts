/** Public types of the emulator's library and control API. */
import type { Logger } from 'pino'
import type { KeyPair } from './xeddsa.js'

export type ReceiptType = 'read' | 'played' | 'delivery'
export type ReceiptVia = 'pn' | 'lid'
export type FaultKind = 'drop' | 'logout' | 'restart-required' | 'reject-next-status'
export type StatusType = 'text' | 'image' | 'video' | 'other'

export interface EmulatorOptions {
  /** port of the HTTP server (WebSocket `/ws/chat` + control API); 0 = any free port */
  port?: number
  /** port of the HTTPS media server; 0 = any free port */
  mediaPort?: number
  /** root Curve25519 key pair signing the Noise certificate chain; default: one shared per process */
  root?: KeyPair
  /** reuse these PEM files if they exist, else generate and write them; default: a fresh temp dir */
  tls?: { certFile: string, keyFile: string }
  qr?: {
    /** refs in one `pair-device` (default 6) */
    refs?: number
    /** lifetime of the first ref (default 60000) */
    firstTtlMs?: number
    /** lifetime of each following ref (default 20000) */
    nextTtlMs?: number
    /** after the last ref expires, close the socket this much later (default 1000) */
    closeGraceMs?: number
  }
  /** how long scan/enterCode wait for the client (default 10000) */
  linkTimeoutMs?: number
  /** numbers a client asks about (usync) become contacts with one device (default true) */
  autoCreateContacts?: boolean
  /** first LID user is lidBase + 1 (default 100000000000000, i.e. 15 digits) */
  lidBase?: bigint
  /** pino logger; default silent (EMULATOR_LOG_LEVEL overrides) */
  logger?: Logger
}

export interface AccountRef {
  number: string
  lid: string
}

export interface LinkedDeviceInfo {
  device: number
  keyIndex: number
  jid: string
  lidJid: string
  platform?: string
  linkedAt: string
  connected: boolean
  preKeysOnServer: number
}

export interface AccountInfo extends AccountRef {
  linkedDevices: LinkedDeviceInfo[]
  connected: boolean
}

export interface ContactInfo {
  number: string
  lid: string
  devices: number
}

export interface LinkResult {
  linked: true
  device: number
}

export interface StatusMedia {
  mimetype: string
  /** plaintext size in bytes (of the decrypted upload when it was found, else fileLength) */
  size: number
  /** base64 sha256 of the plaintext */
  sha256: string
  /** the upload was found on the media server and decrypted */
  uploaded: boolean
  /** MAC valid and plaintext hash equal to the message's fileSha256 */
  verified: boolean
  directPath?: string
}

export interface StatusDelivery {
  number: string
  device: number
  /** the `<to jid>` the client addressed */
  jid: string
  chunk: number
  encType: string
  decrypted: boolean
  error?: string
}

export interface StatusRecord {
  /** raw message id (stanza id, Baileys `key.id`) */
  id: string
  from: string
  fromDevice: number
  type: StatusType
  text?: string
  caption?: string
  backgroundArgb?: number
  font?: number
  media?: StatusMedia
  /** recipient numbers (owners of the addressed devices), in order of first arrival */
  recipients: string[]
  deliveries: StatusDelivery[]
  receivedAt: string
  /** stanzas that arrived with this id */
  chunks: number
  /** numbers that had one device addressed more than once across the chunks */
  duplicateRecipients: string[]
  /** at least one recipient device decrypted the content */
  decrypted: boolean
  /** decryption/verification problems, empty when all went well */
  errors: string[]
  revoked?: boolean
  revokedAt?: string
  /** numbers that received the revoke */
  revokedFor?: string[]
  revokeMessageId?: string
}

export interface RejectedMessage {
  id: string
  from: string
  to: string
  error: number
  at: string
}

export interface ViewOptions {
  viewer: string
  type?: ReceiptType
  via?: ReceiptVia
  /** skip the checks that the viewer received the status and that it was not revoked */
  force?: boolean
}

export interface BulkViewOptions {
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
