/**
 * Signal-protocol side of a simulated device (a contact's phone or companion, or the account's own
 * primary phone): identity + signed prekey + one-time prekeys it publishes, and the libsignal
 * sessions/sender keys it needs to decrypt what the client under test sends.
 */
import { createHash, randomInt } from 'node:crypto'
import { proto, unpadRandomMax16, type BinaryNode } from '@whiskeysockets/baileys'
import {
  GroupCipher,
  GroupSessionBuilder,
  SenderKeyDistributionMessage,
  SenderKeyName,
  SenderKeyRecord
} from '@whiskeysockets/baileys/lib/Signal/Group/index.js'
import { ProtocolAddress, SessionBuilder, SessionCipher, type SessionRecord, type SignalStorage } from 'libsignal'
import { generateSigningKeyPair, generateX25519KeyPair, type KeyPair } from './xeddsa.js'

const KEY_TYPE = Buffer.from([5])

export interface SignalBundle {
  registrationId: number
  identityKey: Buffer
  signedPreKey: { keyId: number, publicKey: Buffer, signature: Buffer }
  preKey?: { keyId: number, publicKey: Buffer }
}

/** Identifies who encrypted a message: the signal address Baileys' peers would use for that device. */
export interface SignalSender {
  /** `user` for PN, `user_1` for LID (Baileys' jidToSignalProtocolAddress) */
  name: string
  device: number
}

export function signalSenderFor (user: string, server: 'lid' | 's.whatsapp.net', device: number): SignalSender {
  return { name: server === 'lid' ? `${user}_1` : user, device }
}

function encodeBigEndian (value: number, bytes: number): Buffer {
  const out = Buffer.alloc(bytes)
  out.writeUIntBE(value, 0, bytes)
  return out
}

function withType (publicKey: Buffer): Buffer {
  return Buffer.concat([KEY_TYPE, publicKey])
}

interface DeviceKeys {
  registrationId: number
  identity: KeyPair
  signedPreKey: { keyId: number, pair: KeyPair, signature: Buffer }
}

export class SimulatedDevice {
  private keysCache?: DeviceKeys
  private readonly preKeys = new Map<number, KeyPair>()
  /** one-time prekeys published ahead (`publishKeys`) and not handed out yet, lowest id first */
  private readonly published: number[] = []
  private nextPreKeyId = 1
  private readonly sessions = new Map<string, SessionRecord>()
  /** last sender-key distribution message per (group, sender), for skmsg stanzas that carry none */
  private readonly senderKeys = new Map<string, Buffer>()
  /** told to fail (`failNextDecrypt`): statuses still to fail, how often each, and how it names itself in the retry */
  failStatuses = 0
  failTimes = 1
  failVia: 'pn' | 'lid' = 'lid'
  /** status id → decrypts of it failed so far (each one a retry receipt) */
  readonly failures = new Map<string, number>()
  private readonly store: SignalStorage

  constructor (
    readonly deviceId: number,
    readonly keyIndex: number
  ) {
    this.store = {
      loadSession: async (id) => this.sessions.get(id),
      storeSession: async (id, record) => {
        this.sessions.set(id, record)
      },
      isTrustedIdentity: () => true,
      loadPreKey: async (id) => {
        const pair = this.preKeys.get(Number(id))
        return pair ? { privKey: pair.private, pubKey: withType(pair.public) } : undefined
      },
      removePreKey: (id) => {
        this.preKeys.delete(Number(id))
      },
      loadSignedPreKey: () => {
        const { pair } = this.keys.signedPreKey
        return { privKey: pair.private, pubKey: withType(pair.public) }
      },
      getOurRegistrationId: () => this.keys.registrationId,
      getOurIdentity: () => ({ privKey: this.keys.identity.private, pubKey: withType(this.keys.identity.public) })
    }
  }

  /** Generated on first use (or by `publishKeys`) so that creating thousands of contacts costs nothing up front. */
  private get keys (): DeviceKeys {
    if (!this.keysCache) {
      const identity = generateSigningKeyPair()
      const signedPair = generateX25519KeyPair()
      this.keysCache = {
        registrationId: randomInt(1, 16380),
        identity,
        signedPreKey: { keyId: 1, pair: signedPair, signature: identity.sign(withType(signedPair.public)) }
      }
    }
    return this.keysCache
  }

  /** whether the device's identity and signed prekey exist yet (made on first use or by `publishKeys`) */
  get hasKeys (): boolean {
    return this.keysCache !== undefined
  }

  get identityKey (): Buffer {
    return this.keys.identity.public
  }

  get registrationId (): number {
    return this.keys.registrationId
  }

  /**
   * Whether this delivery of status `id` fails (the device was told to fail: `failNextDecrypt`); the retry
   * count it asks with, 0 when it does not fail.
   */
  failsStatus (id: string): number {
    const failed = this.failures.get(id) ?? 0
    if (failed === 0) {
      if (this.failStatuses <= 0) return 0
      this.failStatuses--
    } else if (failed >= this.failTimes) {
      return 0
    }
    this.failures.set(id, failed + 1)
    return failed + 1
  }

  /**
   * The device publishes its keys now, as a phone does when it registers (identity, signed prekey and
   * `preKeys` one-time prekeys uploaded ahead: Baileys' own upload is `uploadPreKeys` in
   * lib/Socket/socket.js, an `<iq xmlns="encrypt" type="set">` of a batch). The platform then only reads
   * them when a bundle is fetched; without this the emulator makes them on that fetch (cheap to create
   * thousands of contacts, but the fetch then costs the emulator key generation the platform never does).
   */
  publishKeys (preKeys = 1): void {
    void this.keys
    for (let i = 0; i < preKeys; i++) this.published.push(this.mintPreKey())
  }

  private mintPreKey (): number {
    const preKeyId = this.nextPreKeyId
    this.nextPreKeyId = preKeyId >= (1 << 24) - 1 ? 1 : preKeyId + 1
    this.preKeys.set(preKeyId, generateX25519KeyPair())
    return preKeyId
  }

  /**
   * The bundle the server hands out for this device, with one one-time prekey: a published one while any is
   * left, else one minted now (made on demand, so idle contacts cost nothing); its private half is kept
   * until a pkmsg consumes it.
   */
  takeBundle (): SignalBundle {
    const preKeyId = this.published.shift() ?? this.mintPreKey()
    const { registrationId, identity, signedPreKey } = this.keys
    return {
      registrationId,
      identityKey: identity.public,
      signedPreKey: { keyId: signedPreKey.keyId, publicKey: signedPreKey.pair.public, signature: signedPreKey.signature },
      preKey: { keyId: preKeyId, publicKey: this.preKeys.get(preKeyId)!.public }
    }
  }

  /** Decrypt a 1:1 `pkmsg`/`msg` from `sender` and decode the padded proto.Message inside. */
  async decrypt (sender: SignalSender, type: 'pkmsg' | 'msg', ciphertext: Uint8Array): Promise<proto.Message> {
    const cipher = new SessionCipher(this.store, new ProtocolAddress(sender.name, sender.device))
    const data = Buffer.from(ciphertext)
    const padded =
      type === 'pkmsg' ? await cipher.decryptPreKeyWhisperMessage(data) : await cipher.decryptWhisperMessage(data)
    return proto.Message.decode(unpadRandomMax16(padded))
  }

  /**
   * Encrypt a padded proto.Message for `recipient` through this device's session with it: the one a status
   * it received set up (answered with a `msg`), or, when there is none yet, a new one from the recipient's
   * published bundle (a `pkmsg`, as a phone writing to a device for the first time).
   */
  async encrypt (recipient: SignalSender, bundle: () => SignalBundle | undefined, padded: Uint8Array): Promise<{ type: 'pkmsg' | 'msg', body: Buffer }> {
    const address = new ProtocolAddress(recipient.name, recipient.device)
    const record = this.sessions.get(address.toString())
    if (record?.haveOpenSession() !== true) {
      const b = bundle()
      if (!b) throw new Error(`no session with ${address.toString()} and no bundle to start one`)
      await this.startSession(address, b)
    }
    return await this.encryptOn(address, padded)
  }

  /**
   * Encrypt through a new session started from the recipient's bundle (a `pkmsg`), whatever session there is:
   * the one it had stays in the record (libsignal archives it), so messages still coming on it decrypt. What a
   * phone does when it cannot know which of its sessions the recipient will look the message up under.
   */
  async encryptFresh (recipient: SignalSender, bundle: () => SignalBundle | undefined, padded: Uint8Array): Promise<{ type: 'pkmsg' | 'msg', body: Buffer }> {
    const address = new ProtocolAddress(recipient.name, recipient.device)
    const b = bundle()
    if (!b) throw new Error(`no bundle to start a session with ${address.toString()}`)
    await this.startSession(address, b)
    return await this.encryptOn(address, padded)
  }

  /** A new outgoing session with `address` from its bundle (libsignal archives the one it had). */
  private async startSession (address: ProtocolAddress, b: SignalBundle): Promise<void> {
    await new SessionBuilder(this.store, address).initOutgoing({
      registrationId: b.registrationId,
      identityKey: withType(b.identityKey),
      signedPreKey: { keyId: b.signedPreKey.keyId, publicKey: withType(b.signedPreKey.publicKey), signature: b.signedPreKey.signature },
      // libsignal's typings want a one-time prekey; a bundle without one (all used up) is valid too
      preKey: (b.preKey ? { keyId: b.preKey.keyId, publicKey: withType(b.preKey.publicKey) } : undefined)!
    })
  }

  private async encryptOn (address: ProtocolAddress, padded: Uint8Array): Promise<{ type: 'pkmsg' | 'msg', body: Buffer }> {
    const { type, body } = await new SessionCipher(this.store, address).encrypt(Buffer.from(padded))
    return { type: type === 3 ? 'pkmsg' : 'msg', body: Buffer.from(body, 'binary') }
  }

  rememberSenderKey (groupId: string, sender: SignalSender, skdm: Uint8Array): void {
    this.senderKeys.set(`${groupId}|${sender.name}.${sender.device}`, Buffer.from(skdm))
  }

  forgetSenderKey (groupId: string, sender: SignalSender): void {
    this.senderKeys.delete(`${groupId}|${sender.name}.${sender.device}`)
  }

  senderKeyFor (groupId: string, sender: SignalSender): Buffer | undefined {
    return this.senderKeys.get(`${groupId}|${sender.name}.${sender.device}`)
  }
}

export function bundleNode (jid: string, bundle: SignalBundle): BinaryNode {
  const content: BinaryNode[] = [
    { tag: 'registration', attrs: {}, content: encodeBigEndian(bundle.registrationId, 4) },
    { tag: 'type', attrs: {}, content: KEY_TYPE },
    { tag: 'identity', attrs: {}, content: bundle.identityKey },
    {
      tag: 'skey',
      attrs: {},
      content: [
        { tag: 'id', attrs: {}, content: encodeBigEndian(bundle.signedPreKey.keyId, 3) },
        { tag: 'value', attrs: {}, content: bundle.signedPreKey.publicKey },
        { tag: 'signature', attrs: {}, content: bundle.signedPreKey.signature }
      ]
    }
  ]
  if (bundle.preKey) {
    content.push({
      tag: 'key',
      attrs: {},
      content: [
        { tag: 'id', attrs: {}, content: encodeBigEndian(bundle.preKey.keyId, 3) },
        { tag: 'value', attrs: {}, content: bundle.preKey.publicKey }
      ]
    })
  }
  return { tag: 'user', attrs: { jid }, content }
}

/** Results of sender-key decryption keyed by (SKDM, skmsg): every device that got the same SKDM gets the same plaintext. */
const groupPlaintextCache = new Map<string, Promise<Uint8Array>>()
const GROUP_CACHE_LIMIT = 512

/**
 * Decrypt a `skmsg` with the state a receiving device builds from `skdm` (Baileys' group cipher).
 * A device that processed this SKDM reaches exactly this state, so the (expensive, XEdDSA-verifying)
 * decryption runs once per distinct SKDM/skmsg pair rather than once per recipient device.
 */
export function decryptSenderKeyMessage (
  groupId: string,
  sender: SignalSender,
  skdm: Uint8Array,
  skmsg: Uint8Array
): Promise<proto.Message> {
  const cacheKey = createHash('sha256')
    .update(groupId)
    .update(`${sender.name}.${sender.device}`)
    .update(skdm)
    .update(skmsg)
    .digest('hex')
  let pending = groupPlaintextCache.get(cacheKey)
  if (!pending) {
    pending = (async () => {
      const records = new Map<string, SenderKeyRecord>()
      const store = {
        loadSenderKey: async (name: SenderKeyName) => records.get(name.toString()) ?? new SenderKeyRecord(),
        storeSenderKey: async (name: SenderKeyName, record: SenderKeyRecord) => {
          records.set(name.toString(), record)
        }
      }
      const name = new SenderKeyName(groupId, new ProtocolAddress(sender.name, sender.device))
      await new GroupSessionBuilder(store).process(
        name,
        new SenderKeyDistributionMessage(null, null, null, null, Buffer.from(skdm))
      )
      return new GroupCipher(store, name).decrypt(Buffer.from(skmsg))
    })()
    groupPlaintextCache.set(cacheKey, pending)
    if (groupPlaintextCache.size > GROUP_CACHE_LIMIT) {
      const oldest = groupPlaintextCache.keys().next().value
      if (oldest !== undefined) groupPlaintextCache.delete(oldest)
    }
    pending.catch(() => groupPlaintextCache.delete(cacheKey))
  }
  return pending.then((padded) => proto.Message.decode(unpadRandomMax16(padded)))
}
