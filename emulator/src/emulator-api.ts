// The emulator's library API (EmulatorServer implements it, emulator.ts); the control API mirrors it over HTTP.
import type { MediaUploadInfo } from './media-server.js'
import type { DirectMessageRecord } from './status-mentions.js'
import type {
  AccountInfo,
  AccountRef,
  ContactInfo,
  FailDecryptOptions,
  FaultKind,
  LinkResult,
  ReceiptVia,
  RejectedMessage,
  ConnectionLogEntry,
  SavedContactInfo,
  SavedContactsResult,
  StatusPrivacyInfo,
  StatusPrivacyMode,
  StatusPrivacyResult,
  StatusRecord,
  StatusRefusalInfo,
  StatusRefusalOptions,
  StatusRetryRecord
} from './types.js'
import type {
  BulkViewOptions,
  ConnectionAckStats,
  ReplacedLogin,
  ContactStatusLog,
  SentToContact,
  ContactStatusOptions,
  ContactStatusResult,
  GroupedReceiptOptions,
  GroupedReceiptsResult,
  InteractionOptions,
  InteractionResult,
  SendViewsResult,
  ViewOptions
} from './types-messages.js'

/** The library API; the control API mirrors it over HTTP. */
export interface Emulator {
  readonly wsUrl: string
  readonly controlUrl: string
  readonly mediaUrl: string
  /** base64 of the 32-byte root public key to pin with `WA_CERT_DETAILS.PUBLIC_KEY.set(...)` */
  readonly rootPublicKey: string
  /** path of the media server's self-signed certificate (PEM); trust it with NODE_EXTRA_CA_CERTS */
  readonly caFile: string
  /** `legacy: true`: an account that is not LID-migrated (PN-addressed); see "Rules the emulator enforces" */
  createAccount(number: string, options?: { legacy?: boolean }): AccountRef
  getAccount(number: string): AccountInfo
  scan(number: string, qr: string): Promise<LinkResult>
  enterCode(number: string, code: string): Promise<LinkResult>
  addContact(spec: { number: string, devices?: number, legacy?: boolean }): ContactInfo
  /** `publishKeys`: the devices' keys are made now, as at registration, not on the first bundle fetch */
  addContacts(count: number, options?: { devices?: number, prefix?: string, legacy?: boolean, publishKeys?: boolean }): ContactInfo[]
  getContact(number: string): ContactInfo
  /** The contact links one more device; usync lists it from now on (it holds no sender key yet). */
  addContactDevice(number: string): ContactInfo
  /**
   * The contact's device fails to decrypt the next status it receives and sends a retry receipt for it
   * (`<receipt type="retry">` with `<retry count id t v>`, `<registration>`, `<keys>` from count 2); how the
   * poster answers is recorded on the status (`retries`), strict by default (EmulatorOptions.strictStatusRetries).
   */
  failNextDecrypt(number: string, options?: FailDecryptOptions): ContactInfo
  /** A contact's device asks for a status again now (a retry receipt, next count), queued while the poster is offline. */
  requestStatusRetry(statusId: string, options: { number: string, device?: number, via?: ReceiptVia }): StatusRetryRecord
  /** The account gets another device the emulator plays (a second WA Web): it decrypts the statuses sent to it. */
  addOwnDevice(number: string): { number: string, device: number, lidJid: string }
  statuses(): StatusRecord[]
  status(id: string): StatusRecord
  sendView(statusId: string, options: ViewOptions): Promise<SendViewsResult>
  sendViews(statusId: string, options: BulkViewOptions): Promise<SendViewsResult>
  /**
   * View receipts in the grouped form the platform sends since 2026-09 (tulir/whatsmeow #1270):
   * `<receipt class="status" from="status@broadcast" id="SAGR…" t><participants message_id=…><user jid t type
   * [participant_pn]/>…</participants></receipt>`, several viewers per stanza, a type per viewer.
   */
  sendGroupedReceipts(statusId: string, options: GroupedReceiptOptions): Promise<GroupedReceiptsResult>
  /** The contact reacts to the status (an empty emoji takes the reaction back); see interactions.ts. */
  react(statusId: string, options: InteractionOptions): Promise<InteractionResult>
  /** The contact replies to the status. */
  reply(statusId: string, options: InteractionOptions): Promise<InteractionResult>
  fault(number: string, kind: FaultKind): void
  /** The server names when it stops accepting the client build: `<ib><client_expiration t/>` to the account's live connections (notices.ts). */
  announceClientExpiration(number: string, options: { t: number }): { sent: number }
  /** The server maps the contact's number to a new LID; the next ack of a message to it carries `refresh_lid="true"` (notices.ts). */
  changeLid(contactNumber: string): ContactInfo
  /** An `<ack class="message" refresh_lid="true" from=…>` to the account's live connections now (notices.ts). */
  sendRefreshLidAck(number: string, options: { from: string, id?: string }): { sent: number }
  /**
   * The account's next `count` (default 1) stanzas to status@broadcast (posts, chunks, revokes) are refused:
   * `<ack error=CODE>` and delivered to nobody (refusals.ts). Replaces what was still to come; `count: 0` ends it.
   */
  refuseStatuses(number: string, options: StatusRefusalOptions): StatusRefusalInfo
  /**
   * Tells the account's linked devices the contact's LID ↔ number pair, as the server announces linked
   * profiles (a `mex` notification, op `NotificationLinkedProfilesUpdates`; rc14 emits `lid-mapping.update`
   * and stores the pair). Until then a client that never asked usync about the contact's number cannot map
   * its LID. Offline devices get it at their next login.
   */
  revealLid(contactNumber: string, options: { to: string }): SendViewsResult
  /**
   * The phone's address book becomes `contacts` (numbers not known yet become contacts). Its linked devices
   * learn it through app-state sync: a `server_sync` notification now (the app-state key shared first where a
   * device lacks it), or at their next login when offline; a device linked later gets the key at its first login.
   */
  setSavedContacts(number: string, contacts: Array<{ number: string, name: string }>): Promise<SavedContactsResult>
  savedContacts(number: string): SavedContactInfo[]
  /** The phone's status privacy; linked devices learn it like the address book (and from the privacy query). */
  setStatusPrivacy(number: string, privacy: { mode: StatusPrivacyMode, numbers?: string[] }): Promise<StatusPrivacyResult>
  statusPrivacy(number: string): StatusPrivacyInfo
  waitForStatus(predicate: (status: StatusRecord) => boolean, timeoutMs?: number): Promise<StatusRecord>
  /** resolves when every stanza received so far has been handled and every status decrypted */
  settled(timeoutMs?: number): Promise<void>
  mediaUploads(): MediaUploadInfo[]
  rejectedMessages(): RejectedMessage[]
  /**
   * The last CONNECTION_LOG_SIZE client connections, oldest first: when each opened, logged in and closed
   * (how many handshakes a client ran at once, e.g. a service's paced start).
   */
  connectionLog(): ConnectionLogEntry[]
  /**
   * Stanzas (receipts, messages) the account's linked devices have not acknowledged: delivered without
   * an `<ack>` yet, or queued for a device that is offline. Both are delivered at the device's next login.
   */
  unackedCount(number: string): number
  /** Ack counters per logged-in connection of the account's linked devices, oldest first (recent closed ones too). */
  ackStats(number: string): ConnectionAckStats[]
  /**
   * Logins that replaced a connection of the same device still open (the older one got `stream:error 440
   * conflict replaced`), oldest first; of one account, or of every account.
   */
  replacedLogins(number?: string): ReplacedLogin[]
  /**
   * The contact posts a status the account sees: each linked device gets a `<status>` stanza (contact-statuses.ts),
   * owed an `<ack class="status">` within the ack deadline; offline devices get it at their next login.
   */
  postContactStatus(accountNumber: string, options: ContactStatusOptions): Promise<ContactStatusResult>
  /** What the account was sent of its contacts' statuses: deliveries, acks (with their attributes), redeliveries, receipts, stream errors. */
  contactStatusLog(accountNumber: string): ContactStatusLog
  /** The one-to-one messages accounts sent to the contact's devices, as each decrypted them (status mention notices: status-mentions.ts). */
  directMessages(contactNumber: string): DirectMessageRecord[]
  /** How long a `<status>` stanza may stay unacked before the stream is ended (for stanzas delivered from now on). */
  setStatusAckDeadline(ms: number): void
  /**
   * What the account sent its contacts, as each recipient device decrypted it (sent-to-contacts.ts): its likes of
   * their statuses (E2EE reactions to status@broadcast, refused ones with the rule) and its 1:1 messages (replies).
   */
  sentToContacts(accountNumber: string): SentToContact[]
  stop(): Promise<void>
}
