/**
 * Curve25519 keys with XEdDSA signatures, as WhatsApp/libsignal use them, backed by Node's native
 * X25519/Ed25519 instead of the pure-JS curve25519-js (≈8 ms per signature there, which would make
 * 1,000 simulated contacts take seconds).
 *
 * Trick for fast signing: generate an Ed25519 key natively; its clamped secret scalar is a valid
 * X25519 private key whose Montgomery public key maps to the Ed25519 public key. A native Ed25519
 * signature plus the Edwards sign bit stored in the top bit of byte 63 is exactly what libsignal's
 * XEdDSA verifier (curve25519-js `verify`) accepts.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as nodeSign,
  verify as nodeVerify,
  type KeyObject
} from 'node:crypto'
import { Curve } from '@whiskeysockets/baileys'

/** Same shape as Baileys' `KeyPair`: raw 32-byte keys, public without the 0x05 type prefix. */
export interface KeyPair {
  public: Buffer
  private: Buffer
}

export interface SigningKeyPair extends KeyPair {
  sign(message: Uint8Array): Buffer
}

const X25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex')
const X25519_SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex')
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')
const P = (1n << 255n) - 19n

// Keys come out DER-encoded from the generation job, the way libsignal makes them. Exporting a
// KeyObject as JWK instead is faster but, in Node 20, can deadlock when GC runs mid-export.
export function generateX25519KeyPair (): KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('x25519', {
    publicKeyEncoding: { format: 'der', type: 'spki' },
    privateKeyEncoding: { format: 'der', type: 'pkcs8' }
  })
  return {
    public: Buffer.from(publicKey.subarray(X25519_SPKI_PREFIX.length)),
    private: Buffer.from(privateKey.subarray(X25519_PKCS8_PREFIX.length))
  }
}

/** A fresh Curve25519 key pair that can produce XEdDSA signatures at native speed. */
export function generateSigningKeyPair (): SigningKeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519', {
    publicKeyEncoding: { format: 'der', type: 'spki' },
    privateKeyEncoding: { format: 'der', type: 'pkcs8' }
  })
  const seed = privateKey.subarray(-32)
  const edPublic = publicKey.subarray(-32)
  const scalar = Buffer.from(createHash('sha512').update(seed).digest().subarray(0, 32))
  scalar[0] &= 248
  scalar[31] &= 127
  scalar[31] |= 64
  const signBit = edPublic[31] & 0x80
  let signer: KeyObject | undefined
  return {
    private: scalar,
    public: montgomeryFromEdwards(edPublic),
    sign (message: Uint8Array): Buffer {
      // imported as JWK, OpenSSL's raw-key path: the PKCS8 DER decoder took 0.6 of the 1.1 ms a device's keys
      // cost on Node 20 (an import, not an export: the deadlock above is in exporting a generated key)
      signer ??= createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: Buffer.from(seed).toString('base64url'), x: Buffer.from(edPublic).toString('base64url') }, format: 'jwk' })
      const signature = nodeSign(null, message, signer)
      signature[63] |= signBit
      return signature
    }
  }
}

/** Wrap an existing Curve25519 key pair (e.g. a caller-supplied root); signs with libsignal (slow, fine for a few keys). */
export function toSigningKeyPair (pair: KeyPair | SigningKeyPair): SigningKeyPair {
  if ('sign' in pair && typeof pair.sign === 'function') {
    return pair
  }
  const priv = Buffer.from(pair.private)
  return { public: Buffer.from(pair.public), private: priv, sign: (message) => Buffer.from(Curve.sign(priv, message)) }
}

/** Modular inverse in GF(2^255-19) by the extended Euclidean algorithm (faster than Fermat with BigInt). */
function invert (a: bigint): bigint {
  let [r0, r1] = [P, ((a % P) + P) % P]
  let [t0, t1] = [0n, 1n]
  while (r1 !== 0n) {
    const q = r0 / r1
    ;[r0, r1] = [r1, r0 - q * r1]
    ;[t0, t1] = [t1, t0 - q * t1]
  }
  return ((t0 % P) + P) % P
}

function toBigIntLE (bytes: Uint8Array): bigint {
  let n = 0n
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i])
  return n
}

function fromBigIntLE (n: bigint, length: number): Buffer {
  const out = Buffer.alloc(length)
  let v = n
  for (let i = 0; i < length; i++) {
    out[i] = Number(v & 0xffn)
    v >>= 8n
  }
  return out
}

/** Birational map Ed25519 → Curve25519: u = (1 + y) / (1 - y). Cheaper than importing the scalar into OpenSSL. */
function montgomeryFromEdwards (edPublic: Uint8Array): Buffer {
  const yBytes = Buffer.from(edPublic)
  yBytes[31] &= 0x7f
  const y = toBigIntLE(yBytes)
  const u = (((1n + y) % P) * invert((1n - y + P) % P)) % P
  return fromBigIntLE(u, 32)
}

/**
 * Verify an XEdDSA signature made with a Curve25519 key (32-byte public key, 0x05 prefix allowed).
 * Unlike Baileys' `Curve.verify` in rc14 (which ignores the verification result), this returns the
 * real outcome.
 */
export function xeddsaVerify (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const pub = publicKey.length === 33 ? publicKey.subarray(1) : publicKey
  if (pub.length !== 32 || signature.length !== 64) {
    return false
  }
  const uBytes = Buffer.from(pub)
  uBytes[31] &= 0x7f
  const u = toBigIntLE(uBytes) % P
  const denominator = (u + 1n) % P
  if (denominator === 0n) {
    return false
  }
  const y = (((u - 1n + P) % P) * invert(denominator)) % P
  const edPublic = fromBigIntLE(y, 32)
  edPublic[31] |= signature[63] & 0x80
  const sig = Buffer.from(signature)
  sig[63] &= 0x7f
  try {
    const key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, edPublic]), format: 'der', type: 'spki' })
    return nodeVerify(null, message, key, sig)
  } catch {
    return false
  }
}
