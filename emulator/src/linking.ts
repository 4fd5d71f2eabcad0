/**
 * The phone's side of linking a companion: QR contents, the signed `pair-success`, checking the
 * companion's `pair-device-sign`, and the pairing-code ("link with phone number") crypto.
 * Mirrors Baileys' Utils/validate-connection.js (configureSuccessfulPairing) and
 * Socket/socket.js + messages-recv.js (link_code_companion_reg).
 */
import { createCipheriv, createDecipheriv, createHmac, pbkdf2, randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import {
  Curve,
  getBinaryNodeChild,
  proto,
  WA_ADV_ACCOUNT_SIG_PREFIX,
  WA_ADV_DEVICE_SIG_PREFIX,
  type BinaryNode
} from '@whiskeysockets/baileys'
import { EmulatorError } from './errors.js'
import { aesGcmDecrypt, hkdf } from './noise.js'
import { xeddsaVerify, type KeyPair, type SigningKeyPair } from './xeddsa.js'

const pbkdf2Async = promisify(pbkdf2)
const QR_PREFIX = 'https://wa.me/settings/linked_devices#'

export interface ParsedQr {
  ref: string
  noiseKey: Buffer
  identityKey: Buffer
  advSecret: Buffer
  platform: string
}

/** `[https://wa.me/settings/linked_devices#]ref,noisePubB64,identityPubB64,advSecretB64,platform` */
export function parseQr (raw: string): ParsedQr {
  const body = raw.trim().startsWith(QR_PREFIX) ? raw.trim().slice(QR_PREFIX.length) : raw.trim()
  const parts = body.split(',')
  if (parts.length < 4) {
    throw new EmulatorError(400, 'not a WhatsApp linking QR code (expected ref,noiseKey,identityKey,advSecret[,platform])')
  }
  const [ref, noiseB64, identityB64, advB64, platform = ''] = parts
  const noiseKey = Buffer.from(noiseB64, 'base64')
  const identityKey = Buffer.from(identityB64, 'base64')
  const advSecret = Buffer.from(advB64, 'base64')
  if (!ref || noiseKey.length !== 32 || identityKey.length !== 32 || advSecret.length !== 32) {
    throw new EmulatorError(400, 'malformed linking QR code (keys must be 32 bytes base64)')
  }
  return { ref, noiseKey, identityKey, advSecret, platform }
}

export interface PairSuccessInput {
  iqId: string
  number: string
  /** absent for a legacy (not LID-migrated) account */
  lid?: string
  deviceId: number
  keyIndex: number
  accountKey: SigningKeyPair
  companionIdentity: Buffer
  advSecret: Buffer
  platform?: string
}

/** `<iq type=set><pair-success>` with an ADVSignedDeviceIdentityHMAC the companion can verify. */
export function buildPairSuccess (input: PairSuccessInput): BinaryNode {
  const details = proto.ADVDeviceIdentity.encode({
    rawId: input.deviceId,
    timestamp: Math.floor(Date.now() / 1000),
    keyIndex: input.keyIndex
  }).finish()
  const accountSignature = input.accountKey.sign(
    Buffer.concat([WA_ADV_ACCOUNT_SIG_PREFIX, details, input.companionIdentity])
  )
  const signed = proto.ADVSignedDeviceIdentity.encode({
    details,
    accountSignatureKey: input.accountKey.public,
    accountSignature
  }).finish()
  const hmac = createHmac('sha256', input.advSecret).update(signed).digest()
  return {
    tag: 'iq',
    attrs: { from: 's.whatsapp.net', type: 'set', id: input.iqId, t: String(Math.floor(Date.now() / 1000)) },
    content: [
      {
        tag: 'pair-success',
        attrs: {},
        content: [
          {
            tag: 'device-identity',
            attrs: {},
            content: proto.ADVSignedDeviceIdentityHMAC.encode({ details: signed, hmac }).finish()
          },
          { tag: 'platform', attrs: { name: input.platform ?? 'smba' } },
          {
            tag: 'device',
            attrs: {
              jid: `${input.number}:${input.deviceId}@s.whatsapp.net`,
              ...(input.lid ? { lid: `${input.lid}:${input.deviceId}@lid` } : {})
            }
          }
        ]
      }
    ]
  }
}

/**
 * Check the companion's `<pair-device-sign>` reply: its ADV identity must carry our details and a
 * device signature over (0x06 0x01 || details || companionIdentity || accountKey) made with the
 * companion identity key from the QR / key bundle.
 */
export function verifyPairDeviceSign (
  reply: BinaryNode,
  companionIdentity: Buffer,
  accountPublic: Buffer,
  expectedKeyIndex: number
): { ok: true } | { ok: false, reason: string } {
  const sign = getBinaryNodeChild(reply, 'pair-device-sign')
  const identityNode = getBinaryNodeChild(sign, 'device-identity')
  if (!identityNode || !(identityNode.content instanceof Uint8Array)) {
    return { ok: false, reason: 'pair-device-sign without device-identity' }
  }
  const identity = proto.ADVSignedDeviceIdentity.decode(identityNode.content)
  if (!identity.details || !identity.deviceSignature) {
    return { ok: false, reason: 'device-identity without details or device signature' }
  }
  const details = proto.ADVDeviceIdentity.decode(identity.details)
  if ((details.keyIndex ?? 0) !== expectedKeyIndex || Number(identityNode.attrs['key-index']) !== expectedKeyIndex) {
    return { ok: false, reason: `key-index mismatch (expected ${expectedKeyIndex})` }
  }
  const message = Buffer.concat([WA_ADV_DEVICE_SIG_PREFIX, identity.details, companionIdentity, accountPublic])
  if (!xeddsaVerify(companionIdentity, message, identity.deviceSignature)) {
    return { ok: false, reason: 'device signature does not verify' }
  }
  return { ok: true }
}

// ---- pairing code ("link with phone number instead") ----

function pairingCodeKey (code: string, salt: Buffer): Promise<Buffer> {
  return pbkdf2Async(Buffer.from(code), salt, 2 << 16, 32, 'sha256')
}

/** companion_hello carries salt(32) || iv(16) || AES-CTR(code key, companion ephemeral pub). */
export async function unwrapCompanionEphemeral (code: string, wrapped: Buffer): Promise<Buffer> {
  if (wrapped.length !== 80) {
    throw new EmulatorError(400, 'companion_hello: wrapped ephemeral key must be 80 bytes')
  }
  const key = await pairingCodeKey(code, wrapped.subarray(0, 32))
  const decipher = createDecipheriv('aes-256-ctr', key, wrapped.subarray(32, 48))
  return Buffer.concat([decipher.update(wrapped.subarray(48, 80)), decipher.final()])
}

export async function wrapPrimaryEphemeral (code: string, primaryEphemeralPublic: Buffer): Promise<Buffer> {
  const salt = randomBytes(32)
  const iv = randomBytes(16)
  const cipher = createCipheriv('aes-256-ctr', await pairingCodeKey(code, salt), iv)
  return Buffer.concat([salt, iv, cipher.update(primaryEphemeralPublic), cipher.final()])
}

/**
 * companion_finish: open the key bundle salt(32) || iv(12) || AES-GCM(HKDF(DH(ephemerals))) holding
 * companionIdentity || primaryIdentity || random, and derive the ADV secret from it. A wrong code
 * leaves the two sides with different ephemeral keys, so the GCM tag check fails here.
 */
export function openKeyBundle (args: {
  primaryEphemeral: KeyPair
  companionEphemeralPublic: Buffer
  wrappedBundle: Buffer
  companionIdentity: Buffer
  accountKey: KeyPair
}): { advSecret: Buffer } {
  const companionShared = Curve.sharedKey(args.primaryEphemeral.private, args.companionEphemeralPublic)
  const { wrappedBundle } = args
  if (wrappedBundle.length < 32 + 12 + 16) {
    throw new EmulatorError(400, 'companion_finish: key bundle too short')
  }
  const key = hkdf(companionShared, 32, wrappedBundle.subarray(0, 32), 'link_code_pairing_key_bundle_encryption_key')
  let plaintext: Buffer
  try {
    plaintext = aesGcmDecrypt(key, wrappedBundle.subarray(32, 44), Buffer.alloc(0), wrappedBundle.subarray(44))
  } catch {
    throw new EmulatorError(400, 'pairing code rejected: the companion key bundle does not decrypt (wrong code?)')
  }
  if (plaintext.length !== 96) {
    throw new EmulatorError(400, 'companion_finish: key bundle has the wrong size')
  }
  if (!plaintext.subarray(0, 32).equals(args.companionIdentity)) {
    throw new EmulatorError(400, 'companion_finish: bundle identity differs from companion_identity_public')
  }
  if (!plaintext.subarray(32, 64).equals(args.accountKey.public)) {
    throw new EmulatorError(400, 'companion_finish: bundle was made for another primary identity')
  }
  const identityShared = Curve.sharedKey(args.accountKey.private, args.companionIdentity)
  const advSecret = hkdf(Buffer.concat([companionShared, identityShared, plaintext.subarray(64, 96)]), 32, undefined, 'adv_secret')
  return { advSecret }
}
