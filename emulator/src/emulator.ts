/**
 * The emulated WhatsApp Web server: accepts Baileys connections at `/ws/chat`, links companions
 * for emulated phones (QR or pairing code), logs them in, takes their statuses and sends receipts.
 */
import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { encodeWAMessage, getBinaryNodeChildBuffer, getBinaryNodeChildren, jidDecode, proto, type BinaryNode } from '@whiskeysockets/baileys'
import { pino, type Logger } from 'pino'
import { WebSocketServer, type WebSocket } from 'ws'
import { type Account, CompanionDevice, type Contact, Directory, normalizeNumber, signalNameOf } from './accounts.js'
import { serverSyncNotification, type CollectionName, type Mutation } from './app-state.js'
import { newAckCounters, publicAckStats } from './acks.js'
import { buildCertChain, defaultRootKeyPair, ensureTlsFiles, temporaryTlsFiles } from './certs.js'
import type { ConnectionHandler, LinkCodeAttempt } from './connection.js'
import { WaConnection } from './connection.js'
import { handleControlRequest } from './control-api.js'
import { EmulatorError } from './errors.js'
import { DEFERRED, handleIq, iqResult, IqError, type IqAnswer, type IqHost } from './iq-handlers.js'
import {
  buildPairSuccess,
  openKeyBundle,
  parseQr,
  unwrapCompanionEphemeral,
  verifyPairDeviceSign,
  wrapPrimaryEphemeral
} from './linking.js'
import { MediaServer, type MediaUploadInfo } from './media-server.js'
import type { HandshakeResult } from './noise.js'
import { encryptInteraction, prepareInteraction, type InteractionKind } from './interactions.js'
import { ackOf, checkContactStatus, ContactStatuses, DEFAULT_STATUS_ACK_DEADLINE_MS } from './contact-statuses.js'
import { decodeQrDataUrl, isPngDataUrl } from './qr-image.js'
import { groupedReceiptNodes } from './grouped-receipts.js'
import {
  checkSavedContacts,
  checkStatusPrivacy,
  CONTACTS_COLLECTION,
  Phone,
  phoneMessageId,
  PRIVACY_COLLECTION,
  replaceSavedContacts,
  replaceStatusPrivacy,
  savedContactsOf,
  statusPrivacyAnswer
} from './phone.js'
import { signalSenderFor } from './signal-party.js'
import { RULE_ERROR } from './status-rules.js'
import { isPairwiseStatusReaction, SentToContacts, statusReactionViolation } from './sent-to-contacts.js'
import { StatusCenter } from './statuses.js'
import { DirectInbox, type DirectMessageRecord } from './status-mentions.js'
import { checkRefusal, refuses } from './refusals.js'
import { clientExpirationNode, refreshLidAckNode, StaleLids } from './notices.js'
import { ackClassOf, misaddressedStatus } from './publish-stanza.js'
import type {
  AccountInfo,
  AccountRef,
  BulkViewOptions,
  ConnectionAckStats,
  ReplacedLogin,
  ContactStatusLog,
  SentToContact,
  ContactStatusOptions,
  ContactStatusResult,
  GroupedReceiptOptions,
  GroupedReceiptsResult,
  ContactInfo,
  EmulatorOptions,
  FailDecryptOptions,
  FaultKind,
  InteractionOptions,
  InteractionResult,
  LinkResult,
  ReceiptType,
  ReceiptVia,
  PhoneSyncResult,
  RejectedMessage,
  ConnectionLogEntry,
  SavedContactInfo,
  SavedContactsResult,
  SendViewsResult,
  StatusPrivacyInfo,
  StatusPrivacyMode,
  StatusPrivacyResult,
  StatusRecord,
  StatusRefusalInfo,
  StatusRefusalOptions,
  StatusRetryRecord,
  ViewOptions
} from './types.js'
import { generateX25519KeyPair, toSigningKeyPair, type KeyPair, type SigningKeyPair } from './xeddsa.js'

const STATUS_JID = 'status@broadcast'
const FAULT_KINDS: readonly FaultKind[] = ['drop', 'logout', 'restart-required', 'reject-next-status', 'rate-limited']
const RECEIPT_TYPES: readonly ReceiptType[] = ['read', 'played', 'delivery']
const DEFAULT_WAIT_MS = 10_000
/** connections `connectionLog` remembers (a few hundred bytes each) */
export const CONNECTION_LOG_SIZE = 10_000

const unixNow = () => String(Math.floor(Date.now() / 1000))

function legacyFlag (value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw new EmulatorError(400, 'legacy must be a boolean')
  return value === true
}

const contactInfo = (c: Contact): ContactInfo => ({ number: c.number, lid: c.lid, devices: c.devices.length, legacy: c.legacy })

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
  addContacts(count: number, options?: { devices?: number, prefix?: string, legacy?: boolean }): ContactInfo[]
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

interface Resolved {
  port: number
  mediaPort: number
  qrRefs: number
  qrFirstTtlMs: number
  qrNextTtlMs: number
  qrCloseGraceMs: number
  linkTimeoutMs: number
  autoCreateContacts: boolean
}

function nonNegative (value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isFinite(value) || value < 0) throw new EmulatorError(400, `${name} must be a non-negative number`)
  return value
}

export async function startEmulator (options: EmulatorOptions = {}): Promise<Emulator> {
  const emulator = new EmulatorServer(options)
  await emulator.start(options)
  return emulator
}

export class EmulatorServer implements Emulator, IqHost, ConnectionHandler {
  wsUrl = ''
  controlUrl = ''
  mediaUrl = ''
  caFile = ''
  readonly rootPublicKey: string
  readonly logger: Logger
  readonly directory: Directory
  readonly autoCreateContacts: boolean
  private readonly config: Resolved
  private readonly root: SigningKeyPair
  private readonly serverStatic: KeyPair = generateX25519KeyPair()
  private certChain: Uint8Array = new Uint8Array()
  private media?: MediaServer
  private center?: StatusCenter
  private http?: Server
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 })
  private readonly connections = new Set<WaConnection>()
  /** contacts whose LID changed: the next ack of a message to them carries refresh_lid (notices.ts) */
  private readonly staleLids = new StaleLids()
  private readonly refs = new Map<string, { conn: WaConnection, expiresAt: number }>()
  private readonly changeListeners = new Set<() => void>()
  private readonly rejected: RejectedMessage[] = []
  private readonly replaced: ReplacedLogin[] = []
  private readonly connectionEntries = new Map<WaConnection, ConnectionLogEntry>()
  private readonly connectionHistory: ConnectionLogEntry[] = []
  /** each account's phone: address book, status privacy and app state (phone.ts) */
  private readonly phones = new Map<Account, Phone>()
  /** key shares being encrypted (settled() waits for them) */
  private readonly phoneWork = new Set<Promise<unknown>>()
  private stopped = false
  private temporaryDir?: string
  private readonly strictStatusRetries: boolean
  /** contacts' statuses sent to accounts, and how they were answered (contact-statuses.ts) */
  private readonly contactStatuses: ContactStatuses
  /** what the account sends its contacts, as their devices read it (sent-to-contacts.ts) */
  private readonly sentToContactsLog: SentToContacts
  /** one-to-one messages accounts send to contacts' devices, as those decrypt them (status-mentions.ts) */
  private readonly inbox: DirectInbox
  /** ack deadlines of status stanzas delivered (cleared on stop) */
  private readonly statusDeadlines = new Set<NodeJS.Timeout>()

  constructor (options: EmulatorOptions) {
    this.logger = options.logger ?? pino({ level: process.env.EMULATOR_LOG_LEVEL ?? 'silent', name: 'wa-emulator' })
    this.root = options.root ? toSigningKeyPair(options.root) : defaultRootKeyPair()
    this.rootPublicKey = this.root.public.toString('base64')
    this.directory = new Directory(options.lidBase)
    this.config = {
      port: nonNegative(options.port, 0, 'port'),
      mediaPort: nonNegative(options.mediaPort, 0, 'mediaPort'),
      qrRefs: Math.max(1, Math.floor(nonNegative(options.qr?.refs, 6, 'qr.refs'))),
      qrFirstTtlMs: nonNegative(options.qr?.firstTtlMs, 60_000, 'qr.firstTtlMs'),
      qrNextTtlMs: nonNegative(options.qr?.nextTtlMs, 20_000, 'qr.nextTtlMs'),
      qrCloseGraceMs: nonNegative(options.qr?.closeGraceMs, 1_000, 'qr.closeGraceMs'),
      linkTimeoutMs: nonNegative(options.linkTimeoutMs, DEFAULT_WAIT_MS, 'linkTimeoutMs'),
      autoCreateContacts: options.autoCreateContacts ?? true
    }
    this.autoCreateContacts = this.config.autoCreateContacts
    this.strictStatusRetries = options.strictStatusRetries ?? true
    this.inbox = new DirectInbox(this.directory)
    this.contactStatuses = new ContactStatuses(nonNegative(options.statusAckDeadlineMs, DEFAULT_STATUS_ACK_DEADLINE_MS, 'statusAckDeadlineMs'))
    this.sentToContactsLog = new SentToContacts(this.directory, (account, number, id) =>
      this.contactStatuses.log(account).statuses.some((s) => s.id === id && s.from === number))
  }

  get mediaHost (): string {
    return this.media!.host
  }

  get mediaAuth (): string {
    return this.media!.auth
  }

  private get statusCenter (): StatusCenter {
    return this.center!
  }

  async start (options: EmulatorOptions): Promise<void> {
    const tls = options.tls ? await ensureTlsFiles(options.tls) : await temporaryTlsFiles()
    this.caFile = tls.certFile
    this.temporaryDir = tls.temporaryDir
    this.certChain = buildCertChain(this.root, this.serverStatic.public)
    this.media = await MediaServer.start(tls, this.config.mediaPort, this.logger)
    this.center = new StatusCenter(this.directory, this.media, this.logger, (poster, deviceId, receipt) => {
      // the retry receipt goes to the device that posted (offline: at its next login)
      const device = poster.companions.get(deviceId)
      if (device && !device.removed) this.deliverToDevice(poster, device, [receipt])
    }, this.strictStatusRetries)
    const http = createServer((req, res) => void handleControlRequest(this, req, res))
    http.on('upgrade', (req, socket, head) => {
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
      if (path !== '/ws/chat' || this.stopped) {
        socket.end('HTTP/1.1 404 Not Found\r\n\r\n')
        return
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onWebSocket(ws))
    })
    try {
      await new Promise<void>((resolve, reject) => {
        http.once('error', reject)
        http.listen(this.config.port, '127.0.0.1', () => resolve())
      })
    } catch (error) {
      await this.media.stop()
      throw error
    }
    this.http = http
    const { port } = http.address() as AddressInfo
    this.wsUrl = `ws://127.0.0.1:${port}/ws/chat`
    this.controlUrl = `http://127.0.0.1:${port}`
    this.mediaUrl = this.media.url
    this.logger.info({ wsUrl: this.wsUrl, mediaUrl: this.mediaUrl }, 'emulator listening')
  }

  async stop (): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    for (const conn of this.connections) {
      if (conn.registration?.closeTimer) clearTimeout(conn.registration.closeTimer)
      conn.terminate()
    }
    this.connections.clear()
    this.refs.clear()
    for (const timer of this.statusDeadlines) clearTimeout(timer)
    this.statusDeadlines.clear()
    this.center?.close()
    for (const listener of this.changeListeners) listener()
    this.wss.close()
    if (this.http) {
      this.http.closeAllConnections()
      await new Promise<void>((resolve) => this.http!.close(() => resolve()))
    }
    await this.media?.stop()
    if (this.temporaryDir) await rm(this.temporaryDir, { recursive: true, force: true })
  }

  // ---------------------------------------------------------------- connections

  private onWebSocket (ws: WebSocket): void {
    const conn = new WaConnection(ws, this.serverStatic, this.certChain, this, this.logger)
    this.connections.add(conn)
    const entry: ConnectionLogEntry = { id: conn.id, number: null, openedAt: conn.openedAt.toISOString(), loggedInAt: null, closedAt: null }
    this.connectionEntries.set(conn, entry)
    this.connectionHistory.push(entry)
    if (this.connectionHistory.length > CONNECTION_LOG_SIZE) this.connectionHistory.shift()
    this.logger.debug({ conn: conn.id }, 'client connected')
  }

  onClose (conn: WaConnection): void {
    this.connections.delete(conn)
    const entry = this.connectionEntries.get(conn)
    if (entry !== undefined) entry.closedAt = new Date().toISOString()
    this.connectionEntries.delete(conn)
    // what it left unacked stays with its device (conn.device.acks) for the next login
    if (conn.acks) conn.acks.closedAt = new Date()
    const registration = conn.registration
    if (registration) {
      if (registration.closeTimer) clearTimeout(registration.closeTimer)
      for (const { ref } of registration.refs) this.refs.delete(ref)
      registration.linkCode?.attempt?.settle(new EmulatorError(409, 'the client closed the connection during pairing'))
    }
    this.logger.debug({ conn: conn.id, device: conn.device?.id }, 'client disconnected')
    this.changed()
  }

  onHandshake (conn: WaConnection, { payload }: HandshakeResult): void {
    if (payload.devicePairingData) {
      this.startRegistration(conn, payload.devicePairingData)
    } else {
      this.login(conn, payload)
    }
  }

  async onNode (conn: WaConnection, node: BinaryNode): Promise<void> {
    switch (node.tag) {
      case 'iq':
        if (node.attrs.type === 'result' || node.attrs.type === 'error') {
          this.onIqResponse(conn, node)
        } else {
          await handleIq(this, conn, node)
        }
        return
      case 'message':
        this.onMessage(conn, node)
        return
      case 'status':
        // WA Web's newer publish stanza (publish-stanza.ts); contacts' statuses only ever come the other way
        this.onMessage(conn, node)
        return
      case 'ack':
        if (conn.account && conn.device && conn.acks) {
          const acked = conn.device.acks.ackedStanza(node, conn.acks)
          if (acked) this.contactStatuses.acked(acked, node)
          else this.contactStatuses.unmatchedAck(conn.account, conn.device.id, node)
        }
        return
      case 'receipt':
        if (conn.account && conn.device && conn.acks) {
          conn.device.acks.receipt(node, conn.acks)
          this.contactStatuses.receipt(conn.account, conn.device.id, node)
        }
        return
      case 'presence':
      case 'ib':
      case 'chatstate':
      case 'notification':
      case 'call':
        return
      default:
        this.logger.debug({ tag: node.tag, attrs: node.attrs }, 'unhandled client stanza')
    }
  }

  private liveConnections (account: Account): WaConnection[] {
    return [...this.connections].filter((c) => c.account === account && c.isLoggedIn)
  }

  private changed (): void {
    for (const listener of [...this.changeListeners]) listener()
  }

  /** Wait until `probe` returns a value, re-checking whenever connection state changes. */
  private waitUntil<T>(probe: () => T | undefined, timeoutMs: number, onTimeout: () => EmulatorError): Promise<T> {
    const first = probe()
    if (first !== undefined) return Promise.resolve(first)
    return new Promise((resolve, reject) => {
      const listener = () => {
        if (this.stopped) {
          finish()
          reject(new EmulatorError(409, 'emulator stopped'))
          return
        }
        const value = probe()
        if (value !== undefined) {
          finish()
          resolve(value)
        }
      }
      const finish = () => {
        clearTimeout(timer)
        this.changeListeners.delete(listener)
      }
      const timer = setTimeout(() => {
        finish()
        reject(onTimeout())
      }, timeoutMs)
      this.changeListeners.add(listener)
    })
  }

  // ---------------------------------------------------------------- linking

  private startRegistration (conn: WaConnection, pairingData: proto.ClientPayload.IDevicePairingRegistrationData): void {
    const { qrRefs, qrFirstTtlMs, qrNextTtlMs, qrCloseGraceMs } = this.config
    const now = Date.now()
    let expiresAt = now
    const refs: { ref: string, expiresAt: number }[] = []
    for (let i = 0; i < qrRefs; i++) {
      expiresAt += i === 0 ? qrFirstTtlMs : qrNextTtlMs
      const ref = `2@${randomBytes(30).toString('base64')}`
      refs.push({ ref, expiresAt })
      this.refs.set(ref, { conn, expiresAt })
    }
    // when the last ref has expired unscanned the server drops the socket; Baileys' own QR timer
    // (qrTimeout, same schedule) normally fires first and reports 408 "QR refs attempts ended"
    const closeTimer = setTimeout(() => {
      if (!conn.registration?.pairing) {
        this.logger.debug({ conn: conn.id }, 'all QR refs expired, closing')
        conn.close()
      }
    }, expiresAt - now + qrCloseGraceMs)
    closeTimer.unref()
    conn.registration = { pairingData, refs, closeTimer }
    conn.send({
      tag: 'iq',
      attrs: { from: 's.whatsapp.net', type: 'set', id: `pd-${randomBytes(6).toString('hex')}`, t: unixNow() },
      content: [
        {
          tag: 'pair-device',
          attrs: {},
          content: refs.map((r) => ({ tag: 'ref', attrs: {}, content: Buffer.from(r.ref) }))
        }
      ]
    })
  }

  /** The phone approves the companion: send pair-success (the companion answers with pair-device-sign). */
  private startPairing (conn: WaConnection, account: Account, companionIdentity: Buffer, advSecret: Buffer): number {
    const registration = conn.registration!
    if (registration.closeTimer) clearTimeout(registration.closeTimer)
    for (const { ref } of registration.refs) this.refs.delete(ref)
    const deviceId = account.allocateDeviceId()
    const iqId = `ps-${randomBytes(6).toString('hex')}`
    let platform: string | undefined
    try {
      const props = registration.pairingData.deviceProps ? proto.DeviceProps.decode(registration.pairingData.deviceProps) : undefined
      platform = props?.os ?? undefined
    } catch {
      platform = undefined
    }
    registration.pairing = { iqId, account, deviceId, keyIndex: deviceId, companionIdentity, platform, done: false }
    registration.closeTimer = setTimeout(() => {
      if (!registration.pairing?.done) {
        this.logger.warn({ conn: conn.id }, 'no pair-device-sign in time, closing')
        conn.close()
      }
    }, this.config.linkTimeoutMs)
    registration.closeTimer.unref()
    conn.send(
      buildPairSuccess({
        iqId,
        number: account.number,
        lid: account.legacy ? undefined : account.lid,
        deviceId,
        keyIndex: deviceId,
        accountKey: account.accountKey,
        companionIdentity,
        advSecret,
        platform: 'android'
      })
    )
    this.logger.debug({ conn: conn.id, number: account.number, device: deviceId }, 'pair-success sent')
    this.changed()
    return deviceId
  }

  private onIqResponse (conn: WaConnection, node: BinaryNode): void {
    const pairing = conn.registration?.pairing
    if (!pairing || pairing.done || node.attrs.id !== pairing.iqId) return
    pairing.done = true
    const pairingData = conn.registration!.pairingData
    const identity = Buffer.from(pairingData.eIdent ?? [])
    const verdict =
      node.attrs.type !== 'result'
        ? { ok: false as const, reason: 'client answered pair-success with an error' }
        : !identity.equals(pairing.companionIdentity)
            ? { ok: false as const, reason: 'identity in the QR/key bundle differs from the registration payload' }
            : verifyPairDeviceSign(node, pairing.companionIdentity, pairing.account.accountKey.public, pairing.keyIndex)
    if (!verdict.ok) {
      this.logger.error({ conn: conn.id, reason: verdict.reason }, 'pairing failed')
      conn.streamError('500')
      return
    }
    const { eRegid, eSkeyId, eSkeyVal, eSkeySig } = pairingData
    if (!eRegid?.length || !eSkeyId?.length || !eSkeyVal?.length || !eSkeySig?.length || !conn.clientStaticKey) {
      this.logger.error({ conn: conn.id }, 'pairing failed: incomplete registration payload')
      conn.streamError('500')
      return
    }
    const device = new CompanionDevice(
      pairing.deviceId,
      pairing.keyIndex,
      new Date(),
      pairing.platform,
      conn.clientStaticKey,
      identity,
      Buffer.from(eRegid).readUIntBE(0, eRegid.length),
      {
        keyId: Buffer.from(eSkeyId).readUIntBE(0, eSkeyId.length),
        publicKey: Buffer.from(eSkeyVal),
        signature: Buffer.from(eSkeySig)
      }
    )
    pairing.account.companions.set(device.id, device)
    this.logger.info({ number: pairing.account.number, device: device.id }, 'companion linked, asking it to restart')
    conn.streamError('515')
    this.changed()
  }

  private login (conn: WaConnection, payload: proto.ClientPayload): void {
    const number = payload.username !== null && payload.username !== undefined ? String(payload.username) : ''
    const deviceId = payload.device ?? 0
    const party = this.directory.getByNumber(number)
    const device = party?.kind === 'account' ? party.companions.get(deviceId) : undefined
    const refusal = !device
      ? 'unknown device'
      : device.removed
        ? 'device was logged out'
        : !conn.clientStaticKey?.equals(device.noiseKey)
            ? 'noise key differs from the one registered at pairing'
            : undefined
    if (refusal || !device || party?.kind !== 'account') {
      this.logger.info({ number, device: deviceId, refusal }, 'login refused')
      conn.send({ tag: 'failure', attrs: { reason: '401', location: 'emulator' } })
      conn.close()
      return
    }
    // one socket per linked device: the platform ends the older one with a conflict (Baileys sees 440 "Stream
    // Errored (conflict)", whatsmeow an events.StreamReplaced), and the emulator keeps a record of it for tests
    for (const other of this.connections) {
      if (other !== conn && other.device === device && other.isOpen) {
        this.replaced.push({ number, device: device.id, replaced: other.id, by: conn.id, at: new Date().toISOString() })
        other.streamError('440', { tag: 'conflict', attrs: { type: 'replaced' } })
      }
    }
    conn.account = party
    conn.device = device
    const entry = this.connectionEntries.get(conn)
    if (entry !== undefined) { entry.number = party.number; entry.loggedInAt = new Date().toISOString() }
    conn.send({
      tag: 'success',
      attrs: {
        t: unixNow(),
        props: '1',
        abprops: '1',
        location: 'emulator',
        creation: String(Math.floor(device.linkedAt.getTime() / 1000)),
        // a legacy (not LID-migrated) account is not told a LID, so Baileys' creds.me.lid stays unset
        ...(party.legacy ? {} : { lid: `${party.lid}:${device.id}@lid` })
      }
    })
    conn.acks = newAckCounters(conn.id, device.id)
    device.acks.open(conn.acks)
    // what earlier connections left unacked comes again first (oldest first, same stanzas)
    const unacked = device.acks.redeliver(conn.acks)
    const queued = device.offlineQueue.splice(0)
    const offline = [...unacked, ...queued]
    // the server delivers what queued up while the device was away, then marks the end of the offline queue
    conn.sendMany([
      ...offline.map((n) => ({ ...n, attrs: { ...n.attrs, offline: '1' } })),
      { tag: 'ib', attrs: { from: 's.whatsapp.net' }, content: [{ tag: 'offline', attrs: { count: String(offline.length) } }] }
    ])
    device.acks.delivered(queued, conn.acks)
    this.statusesWritten(conn, device, unacked, true)
    this.statusesWritten(conn, device, queued, false)
    this.shareAppStateKey(party, device)
    this.logger.debug({ conn: conn.id, number, device: device.id, offline: queued.length, redelivered: unacked.length }, 'logged in')
    this.changed()
  }

  async onLinkCodeIq (conn: WaConnection, iq: BinaryNode, child: BinaryNode): Promise<IqAnswer> {
    const registration = conn.registration
    if (!registration || registration.pairing) throw new IqError(400, 'bad-request')
    const stage = child.attrs.stage
    if (stage === 'companion_hello') {
      const number = jidDecode(child.attrs.jid)?.user
      const wrapped = getBinaryNodeChildBuffer(child, 'link_code_pairing_wrapped_companion_ephemeral_pub')
      const noiseKey = getBinaryNodeChildBuffer(child, 'companion_server_auth_key_pub')
      if (!number || !wrapped || wrapped.length !== 80) throw new IqError(400, 'bad-request')
      if (!noiseKey || !conn.clientStaticKey?.equals(Buffer.from(noiseKey))) throw new IqError(400, 'bad-request')
      const ref = randomBytes(16).toString('base64')
      registration.linkCode = { number, ref, wrappedEphemeral: Buffer.from(wrapped) }
      this.logger.debug({ conn: conn.id, number }, 'pairing-code request (companion_hello)')
      this.changed()
      return [
        {
          tag: 'link_code_companion_reg',
          attrs: {},
          content: [{ tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(ref) }]
        }
      ]
    }
    if (stage === 'companion_finish') {
      const request = registration.linkCode
      const attempt = request?.attempt
      if (!request || !attempt) throw new IqError(400, 'bad-request')
      const ref = getBinaryNodeChildBuffer(child, 'link_code_pairing_ref')
      const wrappedBundle = getBinaryNodeChildBuffer(child, 'link_code_pairing_wrapped_key_bundle')
      const companionIdentity = getBinaryNodeChildBuffer(child, 'companion_identity_public')
      request.attempt = undefined
      let advSecret: Buffer
      try {
        if (!ref || Buffer.from(ref).toString() !== request.ref) throw new EmulatorError(400, 'companion_finish for another pairing ref')
        if (!wrappedBundle || !companionIdentity) throw new EmulatorError(400, 'companion_finish without key bundle or identity')
        ;({ advSecret } = openKeyBundle({
          primaryEphemeral: attempt.primaryEphemeral,
          companionEphemeralPublic: attempt.companionEphemeral,
          wrappedBundle: Buffer.from(wrappedBundle),
          companionIdentity: Buffer.from(companionIdentity),
          accountKey: attempt.account.accountKey
        }))
      } catch (error) {
        attempt.settle(error as Error)
        throw new IqError(400, 'bad-request')
      }
      conn.send(iqResult(iq))
      const device = this.startPairing(conn, attempt.account, Buffer.from(companionIdentity!), advSecret)
      attempt.settle({ device })
      return DEFERRED
    }
    throw new IqError(400, 'bad-request')
  }

  onRemoveCompanion (conn: WaConnection): void {
    if (conn.device) {
      conn.device.removed = true
      conn.device.removedAt = new Date()
      conn.device.offlineQueue.length = 0
      conn.device.acks.clear()
      this.logger.info({ number: conn.account?.number, device: conn.device.id }, 'companion logged itself out')
    }
    setImmediate(() => conn.close())
  }

  async scan (number: string, qr: string): Promise<LinkResult> {
    const account = this.directory.account(number)
    if (typeof qr !== 'string' || !qr) throw new EmulatorError(400, 'qr must be a string')
    const parsed = parseQr(isPngDataUrl(qr) ? decodeQrDataUrl(qr) : qr)
    const entry = this.refs.get(parsed.ref)
    if (!entry) throw new EmulatorError(404, 'QR code not recognised (unknown ref, or its connection is gone)')
    if (Date.now() > entry.expiresAt) throw new EmulatorError(400, 'QR code expired')
    const { conn } = entry
    if (!conn.isOpen || !conn.registration || conn.registration.pairing) {
      throw new EmulatorError(409, 'the connection showing this QR code is no longer waiting to be linked')
    }
    if (!conn.clientStaticKey || !parsed.noiseKey.equals(conn.clientStaticKey)) {
      throw new EmulatorError(400, 'QR noise key does not belong to the connection that showed it')
    }
    if (!parsed.identityKey.equals(Buffer.from(conn.registration.pairingData.eIdent ?? []))) {
      throw new EmulatorError(400, 'QR identity key differs from the registration payload')
    }
    return { linked: true, device: this.startPairing(conn, account, parsed.identityKey, parsed.advSecret) }
  }

  async enterCode (number: string, rawCode: string): Promise<LinkResult> {
    const account = this.directory.account(number)
    const code = String(rawCode ?? '').replace(/[\s-]/g, '').toUpperCase()
    if (!/^[0-9A-Z]{8}$/.test(code)) throw new EmulatorError(400, 'a pairing code is 8 letters/digits')
    const conn = await this.waitUntil(
      () =>
        [...this.connections]
          .reverse()
          .find((c) => c.isOpen && c.registration?.linkCode?.number === account.number && !c.registration.pairing),
      this.config.linkTimeoutMs,
      () => new EmulatorError(409, `no client is waiting for a pairing code for ${account.number}`)
    )
    const request = conn.registration!.linkCode!
    if (request.attempt) throw new EmulatorError(409, 'a pairing code is already being checked for this client')
    const companionEphemeral = await unwrapCompanionEphemeral(code, request.wrappedEphemeral)
    const primaryEphemeral = generateX25519KeyPair()
    const wrappedPrimary = await wrapPrimaryEphemeral(code, primaryEphemeral.public)
    const outcome = new Promise<{ device: number }>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (request.attempt === attempt) request.attempt = undefined
        reject(new EmulatorError(504, `client did not finish pairing within ${this.config.linkTimeoutMs} ms`))
      }, this.config.linkTimeoutMs)
      const attempt: LinkCodeAttempt = {
        account,
        primaryEphemeral,
        companionEphemeral,
        settle: (result) => {
          clearTimeout(timer)
          if (result instanceof Error) reject(result)
          else resolve(result)
        }
      }
      request.attempt = attempt
    })
    conn.send({
      tag: 'notification',
      attrs: { from: 's.whatsapp.net', type: 'link_code_companion_reg', id: randomBytes(8).toString('hex').toUpperCase(), t: unixNow() },
      content: [
        {
          tag: 'link_code_companion_reg',
          attrs: {},
          content: [
            { tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(request.ref) },
            { tag: 'primary_identity_pub', attrs: {}, content: account.accountKey.public },
            { tag: 'link_code_pairing_wrapped_primary_ephemeral_pub', attrs: {}, content: wrappedPrimary }
          ]
        }
      ]
    })
    const { device } = await outcome
    return { linked: true, device }
  }

  // ---------------------------------------------------------------- accounts & contacts

  createAccount (number: string, options: { legacy?: boolean } = {}): AccountRef {
    const account = this.directory.createAccount(number, legacyFlag(options?.legacy))
    return { number: account.number, lid: account.lid, legacy: account.legacy }
  }

  getAccount (number: string): AccountInfo {
    const account = this.directory.account(number)
    const live = this.liveConnections(account)
    return {
      number: account.number,
      lid: account.lid,
      legacy: account.legacy,
      connected: live.length > 0,
      linkedDevices: account.activeCompanions().map((d) => ({
        device: d.id,
        keyIndex: d.keyIndex,
        jid: `${account.number}:${d.id}@s.whatsapp.net`,
        lidJid: `${account.lid}:${d.id}@lid`,
        platform: d.platform,
        linkedAt: d.linkedAt.toISOString(),
        connected: live.some((c) => c.device === d),
        preKeysOnServer: d.preKeyCount
      }))
    }
  }

  addContact (spec: { number: string, devices?: number, legacy?: boolean }): ContactInfo {
    return contactInfo(this.directory.createContact(spec?.number, spec?.devices ?? 1, legacyFlag(spec?.legacy)))
  }

  addContacts (count: number, options: { devices?: number, prefix?: string, legacy?: boolean } = {}): ContactInfo[] {
    return this.directory.createContacts(count, options.devices ?? 1, options.prefix, legacyFlag(options.legacy)).map(contactInfo)
  }

  getContact (number: string): ContactInfo {
    return contactInfo(this.directory.contact(number))
  }

  addContactDevice (number: string): ContactInfo {
    const contact = this.directory.contact(number)
    contact.addDevice()
    return contactInfo(contact)
  }

  // ---------------------------------------------------------------- statuses & receipts

  private onMessage (conn: WaConnection, node: BinaryNode): void {
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
   * the poster a retry receipt for each (`<receipt type="retry">`, statuses.ts askAgain); the answer is
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

  async settled (timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new EmulatorError(504, `emulator still busy after ${timeoutMs} ms`)), timeoutMs)
    })
    try {
      await Promise.race([Promise.all([...this.connections].map((c) => c.idle())), timeout])
      await Promise.race([Promise.all([...this.phoneWork, ...[...this.phones.values()].map((p) => p.appState.idle())]), timeout])
      await this.statusCenter.idle(Math.max(1, deadline - Date.now()))
    } finally {
      clearTimeout(timer)
    }
  }

  mediaUploads (): MediaUploadInfo[] {
    return this.media!.uploads()
  }

  connectionLog (): ConnectionLogEntry[] {
    return this.connectionHistory.map((e) => ({ ...e }))
  }

  rejectedMessages (): RejectedMessage[] {
    return [...this.rejected, ...this.statusCenter.rejected].sort((a, b) => a.at.localeCompare(b.at)).map((r) => ({ ...r }))
  }

  unackedCount (number: string): number {
    const account = this.directory.account(number)
    return account.activeCompanions().reduce((sum, d) => sum + d.acks.size + d.offlineQueue.length, 0)
  }

  ackStats (number: string): ConnectionAckStats[] {
    const account = this.directory.account(number)
    return [...account.companions.values()]
      .flatMap((d) => d.acks.connections())
      .sort((a, b) => a.connection - b.connection)
      .map(publicAckStats)
  }

  replacedLogins (number?: string): ReplacedLogin[] {
    const wanted = number === undefined ? undefined : this.directory.account(number).number
    return this.replaced.filter((r) => wanted === undefined || r.number === wanted).map((r) => ({ ...r }))
  }

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
  private async sendInteraction (statusId: string, kind: InteractionKind, options: InteractionOptions): Promise<InteractionResult> {
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

  /** Send to every linked device of the account; offline ones get the stanzas at their next login. */
  private deliverToAccount (account: Account, nodes: BinaryNode[]): SendViewsResult {
    let deliveredTo = 0
    let queuedFor = 0
    const live = this.liveConnections(account)
    for (const device of account.activeCompanions()) {
      if (this.deliverToDevice(account, device, nodes, live)) deliveredTo++
      else queuedFor++
    }
    return { sent: true, stanzas: nodes.length, deliveredTo, queuedFor }
  }

  // ---------------------------------------------------------------- the phone's app state

  private phoneOf (account: Account): Phone {
    let phone = this.phones.get(account)
    if (phone === undefined) {
      phone = new Phone()
      this.phones.set(account, phone)
    }
    return phone
  }

  async setSavedContacts (number: string, contacts: Array<{ number: string, name: string }>): Promise<SavedContactsResult> {
    const account = this.directory.account(number)
    const list = checkSavedContacts({ contacts })
    const phone = this.phoneOf(account)
    const mutations = replaceSavedContacts(this.directory, phone, list, account.legacy)
    const result = await this.writeAndTell(account, phone, CONTACTS_COLLECTION, mutations)
    this.logger.info({ number: account.number, contacts: list.length, ...result }, 'saved contacts set')
    return { contacts: savedContactsOf(this.directory, phone), ...result }
  }

  savedContacts (number: string): SavedContactInfo[] {
    const account = this.directory.account(number)
    const phone = this.phones.get(account)
    return phone === undefined ? [] : savedContactsOf(this.directory, phone)
  }

  async setStatusPrivacy (number: string, privacy: { mode: StatusPrivacyMode, numbers?: string[] }): Promise<StatusPrivacyResult> {
    const account = this.directory.account(number)
    const checked = checkStatusPrivacy(privacy)
    const phone = this.phoneOf(account)
    const mutation = replaceStatusPrivacy(this.directory, phone, checked, account.legacy)
    const result = await this.writeAndTell(account, phone, PRIVACY_COLLECTION, [mutation])
    this.logger.info({ number: account.number, mode: checked.mode, numbers: checked.numbers.length, ...result }, 'status privacy set')
    return { ...phone.privacy, ...result }
  }

  statusPrivacy (number: string): StatusPrivacyInfo {
    const account = this.directory.account(number)
    const privacy = this.phones.get(account)?.privacy ?? { mode: 'contacts', numbers: [] }
    return { mode: privacy.mode, numbers: [...privacy.numbers] }
  }

  /** Writes the mutations to the collection and tells every linked device (`server_sync`; the key first where lacking). */
  private async writeAndTell (account: Account, phone: Phone, collection: CollectionName, mutations: Mutation[]): Promise<PhoneSyncResult> {
    if (mutations.length === 0) return { version: phone.appState.version(collection), changes: 0, deliveredTo: 0, queuedFor: 0 }
    const version = await phone.appState.write(collection, mutations)
    let deliveredTo = 0
    let queuedFor = 0
    for (const device of account.activeCompanions()) {
      const nodes: BinaryNode[] = []
      if (!phone.keyShared.has(device.id)) {
        phone.keyShared.add(device.id)
        nodes.push(await this.keyShareNode(account, phone, device))
      }
      nodes.push(serverSyncNotification(collection, version, randomBytes(8).toString('hex').toUpperCase(), unixNow()))
      if (this.deliverToDevice(account, device, nodes)) deliveredTo++
      else queuedFor++
    }
    return { version, changes: mutations.length, deliveredTo, queuedFor }
  }

  /**
   * The phone shares its app-state key with a linked device that lacks it, once the phone has app state (saved
   * contacts or a status privacy set through the control API): WA Web's primary shares it right after pairing
   * (oxidezap/whatsapp-rust `src/client/node_io.rs`: "the auto-shared key that the primary sends at pairing").
   * An account whose phone never got any stays as before (no key share, nothing more to ack).
   */
  private shareAppStateKey (account: Account, device: CompanionDevice): void {
    const phone = this.phones.get(account)
    if (phone === undefined || !phone.appState.used || phone.keyShared.has(device.id)) return
    phone.keyShared.add(device.id)
    const work = this.keyShareNode(account, phone, device)
      .then((node) => { this.deliverToDevice(account, device, [node]) })
      .catch((error: unknown) => { this.logger.error({ err: error, number: account.number, device: device.id }, 'app-state key share failed') })
      .finally(() => { this.phoneWork.delete(work) })
    this.phoneWork.add(work)
  }

  /**
   * APP_STATE_SYNC_KEY_SHARE from the phone (device 0) to one linked device: a peer message (`category="peer"`,
   * type text: oxidezap/whatsapp-rust `wacore/src/send/peer.rs`) from the own LID (the own number for a legacy
   * account), so rc14 takes it as `fromMe` and stores the key (`Utils/process-message.js`). A new Signal session
   * from the device's bundle each time (a `pkmsg`): the device finds it whichever address it decrypts under.
   */
  private async keyShareNode (account: Account, phone: Phone, device: CompanionDevice): Promise<BinaryNode> {
    const name = signalNameOf(account)
    const sender = signalSenderFor(name.user, name.server, device.id)
    const enc = await account.primary.encryptFresh(sender, () => device.takeBundle(), encodeWAMessage(phone.appState.keyShareMessage()))
    return {
      tag: 'message',
      attrs: { id: phoneMessageId(), from: `${name.user}@${name.server}`, type: 'text', category: 'peer', t: unixNow() },
      content: [{ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.body }]
    }
  }

  /** Sends to one linked device (true), or queues for its next login (false); `live`: the account's live connections. */
  private deliverToDevice (account: Account, device: CompanionDevice, nodes: BinaryNode[], live = this.liveConnections(account)): boolean {
    const conns = live.filter((c) => c.device === device)
    if (conns.length === 0) {
      device.enqueueOffline(nodes)
      return false
    }
    for (const conn of conns) {
      conn.sendMany(nodes)
      if (conn.acks) device.acks.delivered(nodes, conn.acks)
      this.statusesWritten(conn, device, nodes, false)
    }
    return true
  }

  // ---------------------------------------------------------------- contacts' statuses (contact-statuses.ts)

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

  /**
   * Contacts' `<status>` stanzas were written on `conn` (`again`: still unacked from an earlier connection). If
   * one is still unacked on this connection when the deadline passes, the server ends the stream with
   * `<stream:error><ack class="status" id to participant type/></stream:error>` and closes it; the stanza stays
   * pending for the device and comes again at its next login (oxidezap/whatsapp-rust PR #1101: "redelivers it at
   * every login, and ends the stream about every 50 minutes"; its log: 46 forced reconnects, the same 7 statuses
   * redelivered up to 25 times).
   */
  private statusesWritten (conn: WaConnection, device: CompanionDevice, nodes: readonly BinaryNode[], again: boolean): void {
    const statuses = nodes.filter((n) => n.tag === 'status' && this.contactStatuses.isContactStatus(n))
    if (statuses.length === 0) return
    for (const node of statuses) this.contactStatuses.written(node, again)
    const counters = conn.acks
    const timer = setTimeout(() => {
      this.statusDeadlines.delete(timer)
      if (!conn.isOpen || conn.device !== device || counters === undefined || conn.acks !== counters || !conn.account) return
      const late = statuses.find((n) => device.acks.isPending(n, counters))
      if (late === undefined) return
      const ack = ackOf(late)
      this.contactStatuses.streamError(conn.account, device.id, conn.id, ack)
      this.logger.info({ conn: conn.id, number: conn.account.number, device: device.id, id: ack.id }, 'status stanza not acked in time: stream ended')
      conn.send({ tag: 'stream:error', attrs: {}, content: [{ tag: 'ack', attrs: ack }] })
      conn.close()
    }, this.contactStatuses.deadlineMs)
    timer.unref()
    this.statusDeadlines.add(timer)
  }

  /** `w:sync:app:state`: the patches each `<collection>` asks for, once the writes under way are encoded. */
  async appStateAnswer (conn: WaConnection, iq: BinaryNode): Promise<BinaryNode[]> {
    const phone = this.phoneOf(conn.account!)
    await phone.appState.idle()
    const sync = getBinaryNodeChildren(iq, 'sync')[0]
    const collections = getBinaryNodeChildren(sync, 'collection').map((c) => phone.appState.answer(c.attrs.name ?? '', Number(c.attrs.version ?? 0)))
    return [{ tag: 'sync', attrs: {}, content: collections }]
  }

  /** `<iq xmlns="status" type="get"><privacy/></iq>` */
  statusPrivacyAnswer (conn: WaConnection): BinaryNode[] {
    return [statusPrivacyAnswer(this.phoneOf(conn.account!))]
  }

  // ---------------------------------------------------------------- faults

  fault (number: string, kind: FaultKind): void {
    const account = this.directory.account(number)
    if (!FAULT_KINDS.includes(kind)) throw new EmulatorError(400, `kind must be one of ${FAULT_KINDS.join(', ')}`)
    const live = this.liveConnections(account)
    this.logger.info({ number: account.number, kind, connections: live.length }, 'fault')
    switch (kind) {
      case 'drop':
        for (const conn of live) conn.terminate()
        break
      case 'logout':
        // what the server sends when the phone removes the device: Baileys maps 401 to loggedOut
        for (const device of account.activeCompanions()) {
          device.removed = true
          device.removedAt = new Date()
          device.offlineQueue.length = 0
          device.acks.clear()
        }
        for (const conn of live) conn.streamError('401', { tag: 'conflict', attrs: { type: 'device_removed' } })
        break
      case 'restart-required':
        for (const conn of live) conn.streamError('515')
        break
      case 'reject-next-status':
        this.refuseStatuses(account.number, { error: RULE_ERROR, count: 1 })
        break
      case 'rate-limited':
        // the server asks the client to back off, then ends the stream (notices.ts)
        for (const conn of live) conn.streamError('429')
        break
    }
  }

  // ---------------------------------------------------------------- what the server announces (notices.ts)

  announceClientExpiration (number: string, options: { t: number }): { sent: number } {
    if (!Number.isSafeInteger(options?.t) || options.t <= 0) throw new EmulatorError(400, 't (unix seconds, a positive integer) is required')
    const live = this.liveConnections(this.directory.account(number))
    for (const conn of live) conn.send(clientExpirationNode(options.t))
    return { sent: live.length }
  }

  changeLid (contactNumber: string): ContactInfo {
    const contact = this.directory.changeLid(contactNumber)
    this.staleLids.mark(contact.number)
    return contactInfo(contact)
  }

  sendRefreshLidAck (number: string, options: { from: string, id?: string }): { sent: number } {
    if (typeof options?.from !== 'string' || options.from === '') throw new EmulatorError(400, 'from (the peer JID) is required')
    const live = this.liveConnections(this.directory.account(number))
    const id = options.id ?? randomBytes(8).toString('hex').toUpperCase()
    for (const conn of live) conn.send(refreshLidAckNode(id, options.from))
    return { sent: live.length }
  }

  refuseStatuses (number: string, options: StatusRefusalOptions): StatusRefusalInfo {
    const account = this.directory.account(number)
    const refusal = checkRefusal(options)
    account.statusRefusal = refusal.left > 0 ? refusal : null
    this.logger.info({ number: account.number, ...refusal }, 'status stanzas to be refused')
    return { number: account.number, ...refusal }
  }
}
