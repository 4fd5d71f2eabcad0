/**
 * Who exists on the emulated network: accounts (phones that link the client under test) and
 * contacts (everyone else), addressable by phone number and by LID.
 */
import type { BinaryNode } from '@whiskeysockets/baileys'
import { AckLedger } from './acks.js'
import { EmulatorError } from './errors.js'
import type { Refusal } from './refusals.js'
import { SimulatedDevice, type SignalBundle } from './signal-party.js'
import { generateSigningKeyPair, type SigningKeyPair } from './xeddsa.js'

const NUMBER_PATTERN = /^[1-9]\d{5,14}$/
/** Receipts etc. kept for a linked device while it is offline; oldest dropped beyond this. */
const OFFLINE_QUEUE_LIMIT = 100_000

export function normalizeNumber (raw: unknown): string {
  if (typeof raw !== 'string' && typeof raw !== 'number') {
    throw new EmulatorError(400, 'number must be a string of digits')
  }
  const number = String(raw).replace(/[\s\-()]/g, '').replace(/^\+/, '').replace(/@s\.whatsapp\.net$/, '')
  if (!NUMBER_PATTERN.test(number)) {
    throw new EmulatorError(400, `invalid phone number ${JSON.stringify(raw)} (expected 6-15 digits, no leading 0)`)
  }
  return number
}

/** A companion (linked device) of an account: what the client under test registered and uploaded. */
export class CompanionDevice {
  readonly preKeys = new Map<number, Buffer>()
  removed = false
  removedAt?: Date
  readonly offlineQueue: BinaryNode[] = []
  /** delivered stanzas not acked yet (redelivered at the next login) and the ack counters of its connections */
  readonly acks = new AckLedger()

  constructor (
    readonly id: number,
    readonly keyIndex: number,
    readonly linkedAt: Date,
    public platform: string | undefined,
    /** static Noise key the device must log in with */
    readonly noiseKey: Buffer,
    public identityKey: Buffer,
    public registrationId: number,
    public signedPreKey: { keyId: number, publicKey: Buffer, signature: Buffer }
  ) {}

  get preKeyCount (): number {
    return this.preKeys.size
  }

  /** Bundle from the keys the device uploaded; one-time prekeys are handed out once (lowest id first). */
  takeBundle (): SignalBundle {
    let preKey: SignalBundle['preKey']
    const first = this.preKeys.entries().next()
    if (!first.done) {
      const [keyId, publicKey] = first.value
      this.preKeys.delete(keyId)
      preKey = { keyId, publicKey }
    }
    return {
      registrationId: this.registrationId,
      identityKey: this.identityKey,
      signedPreKey: this.signedPreKey,
      preKey
    }
  }

  enqueueOffline (nodes: BinaryNode[]): void {
    this.offlineQueue.push(...nodes)
    if (this.offlineQueue.length > OFFLINE_QUEUE_LIMIT) {
      this.offlineQueue.splice(0, this.offlineQueue.length - OFFLINE_QUEUE_LIMIT)
    }
  }
}

export class Account {
  readonly kind = 'account'
  /** the phone's ADV account key: signs linked devices' identities */
  readonly accountKey: SigningKeyPair = generateSigningKeyPair()
  /** the primary phone (device 0): Baileys encrypts statuses to it too */
  readonly primary = new SimulatedDevice(0, 0)
  readonly companions = new Map<number, CompanionDevice>()
  /** status stanzas still to be refused, and with which code (`Emulator.refuseStatuses`) */
  statusRefusal: Refusal | null = null
  /**
   * the account's other devices the emulator plays itself (another WA Web or desktop linked to the same
   * phone): listed like companions, and they decrypt what they are sent (`addOwnDevice`)
   */
  readonly ownDevices = new Map<number, SimulatedDevice>()
  private nextDeviceId = 1

  constructor (
    readonly number: string,
    readonly lid: string,
    /** not LID-migrated (PN-addressed): see `Party.legacy` */
    readonly legacy = false
  ) {}

  allocateDeviceId (): number {
    return this.nextDeviceId++
  }

  activeCompanions (): CompanionDevice[] {
    return [...this.companions.values()].filter((d) => !d.removed)
  }

  /** Devices as the server lists them in usync: primary + every linked, not removed companion. */
  deviceList (): { id: number, keyIndex: number }[] {
    const own = [...this.ownDevices.values()].map((d) => ({ id: d.deviceId, keyIndex: d.keyIndex }))
    return [{ id: 0, keyIndex: 0 }, ...this.activeCompanions().map((d) => ({ id: d.id, keyIndex: d.keyIndex })), ...own].sort((a, b) => a.id - b.id)
  }

  /** One more device of the account that the emulator plays (next free id). */
  addOwnDevice (): SimulatedDevice {
    const id = this.allocateDeviceId()
    const device = new SimulatedDevice(id, id)
    this.ownDevices.set(id, device)
    return device
  }
}

export class Contact {
  readonly kind = 'contact'
  readonly devices: SimulatedDevice[]

  constructor (
    readonly number: string,
    /** changes only when the server re-maps the number (Directory.changeLid) */
    public lid: string,
    deviceCount: number,
    /** not LID-migrated (PN-addressed): see `Party.legacy` */
    readonly legacy = false
  ) {
    // companions of a contact get ids 1..n-1; key-index mirrors the id (Baileys only needs it non-zero)
    this.devices = Array.from({ length: deviceCount }, (_, i) => new SimulatedDevice(i, i))
  }

  deviceList (): { id: number, keyIndex: number }[] {
    return this.devices.map((d) => ({ id: d.deviceId, keyIndex: d.keyIndex }))
  }

  /** The contact links one more device (next id): it holds no sender key until it gets an SKDM. */
  addDevice (): SimulatedDevice {
    if (this.devices.length >= 16) throw new EmulatorError(409, `${this.number} has 16 devices already`)
    const id = Math.max(...this.devices.map((d) => d.deviceId)) + 1
    const device = new SimulatedDevice(id, id)
    this.devices.push(device)
    return device
  }
}

/**
 * `legacy` parties are not LID-migrated: their number is still their address, the platform as
 * Baileys rc14 assumes it. Phone-number device queries answer their devices (iq-handlers.ts), a legacy
 * account may post PN-addressed without `<meta status_setting>` (status-rules.ts), and it is not told
 * its LID at pairing or login (Baileys' `creds.me.lid` stays unset; Baileys #2794 describes migrated
 * accounts as the ones with `sock.user.lid` populated). The usync `lid` protocol still maps their
 * number to a LID: rc14 opens Signal sessions only with LID jids (Socket/messages-send.js
 * assertSessions drops a PN it cannot map), so without one it could send to nobody.
 * Everyone else is LID-migrated (the default).
 */
export type Party = Account | Contact

/** The Signal address a party's devices are known under on the recipients' side (LID since the migration). */
export function signalNameOf (party: Party): { user: string, server: 'lid' | 's.whatsapp.net' } {
  return party.legacy ? { user: party.number, server: 's.whatsapp.net' } : { user: party.lid, server: 'lid' }
}

export interface ResolvedDevice {
  party: Party
  deviceId: number
  /** private keys available: the emulator can decrypt for it */
  simulated?: SimulatedDevice
  companion?: CompanionDevice
}

export class Directory {
  private readonly byNumber = new Map<string, Party>()
  private readonly byLid = new Map<string, Party>()
  private lidCounter = 0n
  private bulkCounter = 0

  constructor (private readonly lidBase: bigint = 100_000_000_000_000n) {}

  private allocateLid (): string {
    let lid: string
    do {
      this.lidCounter += 1n
      lid = String(this.lidBase + this.lidCounter)
    } while (this.byLid.has(lid))
    return lid
  }

  createAccount (rawNumber: unknown, legacy = false): Account {
    const number = normalizeNumber(rawNumber)
    const existing = this.byNumber.get(number)
    if (existing) {
      throw new EmulatorError(409, `${number} already exists as ${existing.kind === 'account' ? 'an account' : 'a contact'}`)
    }
    const account = new Account(number, this.allocateLid(), legacy === true)
    this.byNumber.set(number, account)
    this.byLid.set(account.lid, account)
    return account
  }

  createContact (rawNumber: unknown, devices = 1, legacy = false): Contact {
    const number = normalizeNumber(rawNumber)
    if (!Number.isInteger(devices) || devices < 1 || devices > 16) {
      throw new EmulatorError(400, 'devices must be an integer between 1 and 16')
    }
    const existing = this.byNumber.get(number)
    if (existing) {
      throw new EmulatorError(409, `${number} already exists as ${existing.kind === 'account' ? 'an account' : 'a contact'}`)
    }
    const contact = new Contact(number, this.allocateLid(), devices, legacy === true)
    this.byNumber.set(number, contact)
    this.byLid.set(contact.lid, contact)
    return contact
  }

  /**
   * The server maps the contact's number to a new LID (notices.ts: what an `<ack refresh_lid>` makes a client
   * query again); usync answers the new one from now on, and the old one still resolves to the contact.
   */
  changeLid (rawNumber: unknown): Contact {
    const contact = this.contact(rawNumber)
    contact.lid = this.allocateLid()
    this.byLid.set(contact.lid, contact)
    return contact
  }

  /** `count` new contacts with generated numbers (prefix + 7-digit counter, skipping taken numbers). */
  createContacts (count: number, devices = 1, prefix = '4470', legacy = false, publishKeys = false): Contact[] {
    if (!Number.isInteger(count) || count < 1 || count > 100_000) {
      throw new EmulatorError(400, 'count must be an integer between 1 and 100000')
    }
    if (!/^[1-9]\d{0,7}$/.test(prefix)) {
      throw new EmulatorError(400, 'prefix must be 1-8 digits, no leading 0')
    }
    const created: Contact[] = []
    for (let attempts = 0; created.length < count && attempts < count + 10_000_000; attempts++) {
      const number = `${prefix}${String(this.bulkCounter++ % 10_000_000).padStart(7, '0')}`
      if (!this.byNumber.has(number)) {
        const contact = this.createContact(number, devices, legacy)
        if (publishKeys) for (const device of contact.devices) device.publishKeys()
        created.push(contact)
      }
    }
    if (created.length < count) {
      throw new EmulatorError(409, `could not allocate ${count} free numbers under prefix ${prefix}`)
    }
    return created
  }

  getByNumber (number: string): Party | undefined {
    return this.byNumber.get(number)
  }

  getByLid (lid: string): Party | undefined {
    return this.byLid.get(lid)
  }

  account (rawNumber: unknown): Account {
    const number = normalizeNumber(rawNumber)
    const party = this.byNumber.get(number)
    if (!party || party.kind !== 'account') {
      throw new EmulatorError(404, `no account ${number}`)
    }
    return party
  }

  contact (rawNumber: unknown): Contact {
    const number = normalizeNumber(rawNumber)
    const party = this.byNumber.get(number)
    if (!party || party.kind !== 'contact') {
      throw new EmulatorError(404, `no contact ${number}`)
    }
    return party
  }

  /** Look a user up by the user part of a PN or LID jid. */
  resolveUser (user: string, server: string): Party | undefined {
    if (server === 'lid' || server === 'hosted.lid') return this.getByLid(user)
    if (server === 's.whatsapp.net' || server === 'c.us' || server === 'hosted') return this.byNumber.get(user)
    return undefined
  }

  resolveDevice (user: string, server: string, deviceId: number): ResolvedDevice | undefined {
    const party = this.resolveUser(user, server)
    if (!party) return undefined
    if (party.kind === 'contact') {
      const simulated = party.devices.find((d) => d.deviceId === deviceId)
      return simulated ? { party, deviceId, simulated } : undefined
    }
    if (deviceId === 0) {
      return { party, deviceId, simulated: party.primary }
    }
    const own = party.ownDevices.get(deviceId)
    if (own) return { party, deviceId, simulated: own }
    const companion = party.companions.get(deviceId)
    return companion && !companion.removed ? { party, deviceId, companion } : undefined
  }

  parties (): Party[] {
    return [...this.byNumber.values()]
  }
}
