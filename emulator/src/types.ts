/** Public types of the emulator's library and control API. */
import type { Logger } from 'pino'
import type { KeyPair } from './xeddsa.js'

export type ReceiptType = 'read' | 'played' | 'delivery'
export type ReceiptVia = 'pn' | 'lid'
export type FaultKind = 'drop' | 'logout' | 'restart-required' | 'reject-next-status' | 'rate-limited'
export type StatusType = 'text' | 'image' | 'video' | 'audio' | 'other'
/** what a stanza to status@broadcast is: a post, a reaction or a revoke (status-rules.ts) */
export type StatusKind = 'post' | 'reaction' | 'revoke'
/** a rule of status-rules.ts / "Rules the emulator enforces" in the README */
export type StatusRule =
  | 'addressing-mode'
  | 'pn-participants'
  | 'missing-status-setting'
  | 'status-setting-on-reaction'
  | 'status-setting-on-revoke'
  | 'mentioned-users'

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
  /**
   * A status retry receipt must be answered WA Web's way (sent again to status@broadcast with a sender key
   * distribution message for the device): an answer addressed to the device itself (rc14's
   * sendMessagesAgain) is recorded as a violation and not read as the status. false: such an answer is
   * decrypted and counts. Default true.
   */
  strictStatusRetries?: boolean
  /**
   * how long a linked device may leave a contact's `<status>` stanza unacked before the server ends its stream
   * with `<stream:error><ack class="status" …/></stream:error>` (default 3000000: the platform's ~50 minutes,
   * oxidezap/whatsapp-rust PR #1101)
   */
  statusAckDeadlineMs?: number
}

/** How a device that failed to decrypt a status asks for it again (`failNextDecrypt`). */
export interface FailDecryptOptions {
  /** the contact's device (default 0, its phone) */
  device?: number
  /** how many of the next statuses it receives fail, each with its retries (default 1) */
  statuses?: number
  /** how many times in a row the same status fails, each failure a retry receipt with the next count (default 1, at most 4) */
  times?: number
  /** the retry receipt names the device by LID (default, a LID-migrated device) or by phone number */
  via?: ReceiptVia
}

/** One retry receipt a recipient device sent for a status, and how it was answered. */
export interface StatusRetryRecord {
  /** the device as the receipt named it (`participant`) */
  requester: string
  number: string
  device: number
  /** `<retry count>` */
  count: number
  requestedAt: string
  answered: boolean
  answeredAt?: string
  /** `to` of the answer: status@broadcast (WA Web) or a device JID (rc14's sendMessagesAgain) */
  answeredTo?: string
  /** the answer carried a sender key distribution message for the device */
  skdm?: boolean
  /** the device read the status from the answer */
  decrypted?: boolean
  /** how the answer differs from WA Web's (whatsapp-rust src/retry.rs retransmit_status_message); empty when it does not */
  violations: string[]
  error?: string
}

export interface AccountRef {
  number: string
  lid: string
  /** not LID-migrated (PN-addressed; not told its LID at login): created with `{ legacy: true }` */
  legacy: boolean
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
  /** not LID-migrated (PN-addressed): created with `{ legacy: true }` */
  legacy: boolean
}

export type StatusPrivacyMode = 'contacts' | 'allowlist' | 'denylist'

/** One contact saved in an account's phone (its address book). */
export interface SavedContactInfo {
  number: string
  name: string
  lid: string
}

/** An account's status privacy: who its statuses go to (every saved contact, all but `numbers`, only `numbers`). */
export interface StatusPrivacyInfo {
  mode: StatusPrivacyMode
  /** the mode's list ([] for contacts) */
  numbers: string[]
}

/** How a change on the phone reached its linked devices: `server_sync` notifications (and the key share where needed). */
export interface PhoneSyncResult {
  /** the collection's version after the change */
  version: number
  /** app-state mutations (patches) the change wrote; 0 when nothing changed (nothing is sent then) */
  changes: number
  /** linked devices that got the notification now */
  deliveredTo: number
  /** offline linked devices that get it at their next login */
  queuedFor: number
}

export interface SavedContactsResult extends PhoneSyncResult {
  contacts: SavedContactInfo[]
}

export interface StatusPrivacyResult extends PhoneSyncResult, StatusPrivacyInfo {}

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
  /** audio: a voice note (`ptt`) */
  ptt?: boolean
  /** audio and video: the duration the message declares */
  seconds?: number
}

export interface StatusDelivery {
  number: string
  device: number
  /** the `<to jid>` the client addressed, or (a device reached by the fan-out only) the device jid in the namespace of its audience entry */
  jid: string
  chunk: number
  /** type of the `<enc>` addressed to this device (`none`: reached by the fan-out, no SKDM in this stanza) */
  encType: string
  /** this stanza gave the device the sender key (an SKDM) */
  skdm: boolean
  decrypted: boolean
  error?: string
  /** the device already had this id and dropped this copy, sent under a Signal counter it had used (why) */
  dropped?: string
  /** the device was told to fail this decrypt (`failNextDecrypt`) and sent a retry receipt with this count */
  retry?: number
  /** a delivery of the answer to a retry receipt (not a chunk of the post) */
  resend?: boolean
}

/** One stanza that arrived under a status id (a chunk), as the server read it. */
export interface StatusStanza {
  chunk: number
  receivedAt: string
  /** the element: `message`, or `status` (WA Web's newer publish stanza, acked `class="status"`: publish-stanza.ts) */
  tag: 'message' | 'status'
  /** the `<message>` (or `<status>`) attributes as sent */
  attrs: Record<string, string>
  /** bare `<to jid="USER"/>` entries (the audience list), as sent */
  audience: string[]
  /** device-level `<to jid="USER:DEVICE">` entries, as sent */
  devices: string[]
  /** of `devices`: those carrying an `<enc>` (an SKDM) */
  skdmDevices: string[]
  /** `<meta status_setting>` value, if any */
  statusSetting?: string
  /** `mediatype` of the skmsg `<enc>`, if any (`image`, `video`, `ptt`, `audio`…) */
  mediatype?: string
  deviceIdentity: boolean
  /** acked without error */
  accepted: boolean
  /** when NACKed: the code (479) and the rule broken */
  error?: number
  rule?: StatusRule
  detail?: string
}

export interface StatusRejection {
  error: number
  rule: StatusRule
  detail: string
  chunk: number
}

export interface StatusRecord {
  /** raw message id (stanza id, Baileys `key.id`) */
  id: string
  from: string
  fromDevice: number
  /** a post, or a reaction sent through status@broadcast (revokes are recorded on their target) */
  kind: StatusKind
  type: StatusType
  text?: string
  caption?: string
  backgroundArgb?: number
  font?: number
  media?: StatusMedia
  /** recipient numbers (audience users the skmsg fanned out to), in order of first arrival */
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
  /** every stanza that arrived under this id, accepted or not, in order */
  stanzas: StatusStanza[]
  /** audience users (user jids) of the accepted stanzas: bare `<to>` users plus users of device-level `<to>`s */
  audience: string[]
  /** `<meta status_setting>` of the first stanza that carried one */
  statusSetting?: string
  /** device jids that got an SKDM in an accepted stanza */
  skdmDevices: string[]
  /** set when a stanza under this id was NACKed (the first one) */
  rejected?: StatusRejection
  revoked?: boolean
  revokedAt?: string
  /** numbers that received the revoke */
  revokedFor?: string[]
  revokeMessageId?: string
  /** the decrypted message carried `messageContextInfo.messageSecret` (32 bytes), as WA Web's statuses do */
  messageSecret?: boolean
  /** retry receipts recipient devices sent for it (`failNextDecrypt`), and their answers */
  retries: StatusRetryRecord[]
  /** the `<meta><mentioned_users><to jid>`s of the post (status-mentions.ts), when it named anyone */
  mentionedUsers?: string[]
}

/** `Emulator.refuseStatuses`: the account's next `count` status stanzas are refused with `error`. */
export interface StatusRefusalOptions {
  /** the `<ack error>` code, e.g. 429 (rate-overlimit), 503 (service unavailable), 479 (SmaxInvalid) */
  error: number
  /** how many stanzas to status@broadcast (posts, chunks, revokes, reactions) in a row; default 1 */
  count?: number
  /** let this many status stanzas through first (e.g. 1: a post's second chunk is the first refused); default 0 */
  after?: number
}

/** The refusals still to come for an account (`left` 0: none), after `after` more stanzas went through. */
export interface StatusRefusalInfo {
  number: string
  error: number
  left: number
  after: number
}

/** One client connection as the emulator saw it (`connectionLog`): when it opened, logged in and closed. */
export interface ConnectionLogEntry {
  id: number
  /** the account it logged in as (null: not logged in, e.g. linking or refused) */
  number: string | null
  openedAt: string
  /** when `<success>` went out: the handshake and login are over */
  loggedInAt: string | null
  closedAt: string | null
}

export interface RejectedMessage {
  id: string
  from: string
  to: string
  error: number
  at: string
  /** the rule broken (status-rules.ts); absent for a refusal asked for (`refuseStatuses`, `reject-next-status`) */
  rule?: StatusRule
  detail?: string
  kind?: StatusKind
}
