// The emulated server's state, settings and delivery to linked devices: the base of EmulatorServer's layers.
import type { Server } from 'node:http'
import type { BinaryNode } from '@whiskeysockets/baileys'
import { pino, type Logger } from 'pino'
import { WebSocketServer } from 'ws'
import { type Account, CompanionDevice, type Contact, Directory } from './accounts.js'
import { defaultRootKeyPair } from './certs.js'
import { WaConnection } from './connection.js'
import { EmulatorError } from './errors.js'
import { MediaServer } from './media-server.js'
import { ackOf, ContactStatuses, DEFAULT_STATUS_ACK_DEADLINE_MS } from './contact-statuses.js'
import { Phone } from './phone.js'
import { SentToContacts } from './sent-to-contacts.js'
import { StatusCenter } from './statuses.js'
import { DirectInbox } from './status-mentions.js'
import { StaleLids } from './notices.js'
import type { ContactInfo, EmulatorOptions, RejectedMessage, ConnectionLogEntry } from './types.js'
import type { ReplacedLogin, SendViewsResult } from './types-messages.js'
import { generateX25519KeyPair, toSigningKeyPair, type KeyPair, type SigningKeyPair } from './xeddsa.js'

export const STATUS_JID = 'status@broadcast'
export const DEFAULT_WAIT_MS = 10_000
/** connections `connectionLog` remembers (a few hundred bytes each) */
export const CONNECTION_LOG_SIZE = 10_000

export const unixNow = (): string => String(Math.floor(Date.now() / 1000))

export function legacyFlag (value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw new EmulatorError(400, 'legacy must be a boolean')
  return value === true
}

export const contactInfo = (c: Contact): ContactInfo => ({ number: c.number, lid: c.lid, devices: c.devices.length, legacy: c.legacy })

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

/**
 * The emulated server's state and the delivery every concern shares: the first layer of EmulatorServer
 * (emulator.ts). Each layer is one concern in a file of its own, extending the one before:
 * server-base.ts → server-linking.ts → server-phone.ts → server-receipts.ts → server-statuses.ts →
 * server-accounts.ts → emulator.ts.
 */
export abstract class ServerBase {
  wsUrl = ''
  controlUrl = ''
  mediaUrl = ''
  caFile = ''
  readonly rootPublicKey: string
  readonly logger: Logger
  readonly directory: Directory
  readonly autoCreateContacts: boolean
  protected readonly config: Resolved
  protected readonly root: SigningKeyPair
  protected readonly serverStatic: KeyPair = generateX25519KeyPair()
  protected certChain: Uint8Array = new Uint8Array()
  protected media?: MediaServer
  protected center?: StatusCenter
  protected http?: Server
  protected readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 })
  protected readonly connections = new Set<WaConnection>()
  /** contacts whose LID changed: the next ack of a message to them carries refresh_lid (notices.ts) */
  protected readonly staleLids = new StaleLids()
  protected readonly refs = new Map<string, { conn: WaConnection, expiresAt: number }>()
  protected readonly changeListeners = new Set<() => void>()
  protected readonly rejected: RejectedMessage[] = []
  protected readonly replaced: ReplacedLogin[] = []
  protected readonly connectionEntries = new Map<WaConnection, ConnectionLogEntry>()
  protected readonly connectionHistory: ConnectionLogEntry[] = []
  /** each account's phone: address book, status privacy and app state (phone.ts) */
  protected readonly phones = new Map<Account, Phone>()
  /** key shares being encrypted (settled() waits for them) */
  protected readonly phoneWork = new Set<Promise<unknown>>()
  protected stopped = false
  protected temporaryDir?: string
  protected readonly strictStatusRetries: boolean
  /** contacts' statuses sent to accounts, and how they were answered (contact-statuses.ts) */
  protected readonly contactStatuses: ContactStatuses
  /** what the account sends its contacts, as their devices read it (sent-to-contacts.ts) */
  protected readonly sentToContactsLog: SentToContacts
  /** one-to-one messages accounts send to contacts' devices, as those decrypt them (status-mentions.ts) */
  protected readonly inbox: DirectInbox
  /** ack deadlines of status stanzas delivered (cleared on stop) */
  protected readonly statusDeadlines = new Set<NodeJS.Timeout>()

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

  protected get statusCenter (): StatusCenter {
    return this.center!
  }

  protected liveConnections (account: Account): WaConnection[] {
    return [...this.connections].filter((c) => c.account === account && c.isLoggedIn)
  }

  protected changed (): void {
    for (const listener of [...this.changeListeners]) listener()
  }

  /** Wait until `probe` returns a value, re-checking whenever connection state changes. */
  protected waitUntil<T>(probe: () => T | undefined, timeoutMs: number, onTimeout: () => EmulatorError): Promise<T> {
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

  /** Send to every linked device of the account; offline ones get the stanzas at their next login. */
  protected deliverToAccount (account: Account, nodes: BinaryNode[]): SendViewsResult {
    let deliveredTo = 0
    let queuedFor = 0
    const live = this.liveConnections(account)
    for (const device of account.activeCompanions()) {
      if (this.deliverToDevice(account, device, nodes, live)) deliveredTo++
      else queuedFor++
    }
    return { sent: true, stanzas: nodes.length, deliveredTo, queuedFor }
  }

  /** Sends to one linked device (true), or queues for its next login (false); `live`: the account's live connections. */
  protected deliverToDevice (account: Account, device: CompanionDevice, nodes: BinaryNode[], live = this.liveConnections(account)): boolean {
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

  /**
   * Contacts' `<status>` stanzas were written on `conn` (`again`: still unacked from an earlier connection). If
   * one is still unacked on this connection when the deadline passes, the server ends the stream with
   * `<stream:error><ack class="status" id to participant type/></stream:error>` and closes it; the stanza stays
   * pending for the device and comes again at its next login (oxidezap/whatsapp-rust PR #1101: "redelivers it at
   * every login, and ends the stream about every 50 minutes"; its log: 46 forced reconnects, the same 7 statuses
   * redelivered up to 25 times).
   */
  protected statusesWritten (conn: WaConnection, device: CompanionDevice, nodes: readonly BinaryNode[], again: boolean): void {
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

  /** the phone shares its app-state key with a device that lacks it (server-phone.ts) */
  protected abstract shareAppStateKey (account: Account, device: CompanionDevice): void
}
