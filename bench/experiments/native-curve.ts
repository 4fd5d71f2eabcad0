// Experiment (BENCH_EXPERIMENT=native-curve), preloaded into the service after tsx: what Baileys'
// Curve25519 work would cost on Node's native crypto. libsignal 6 (src/curve.js), which Baileys uses:
// - calculateAgreement wraps each raw key in PKCS8/SPKI DER for createPrivateKey/createPublicKey, which
//   OpenSSL 3 parses with its slow generic decoder (≈ 0.6 ms per agreement here; the DH itself ≈ 0.04 ms).
//   Here the keys are imported as JWK, which takes the raw-key path.
// - verifySignature checks XEdDSA signatures in pure JS (curve25519-js, ≈ 20 ms each; every Noise
//   handshake checks two). Here Node's Ed25519 verifies them (the emulator's own xeddsaVerify).
// Baileys imports libsignal's curve.js as ESM, whose named exports are fixed when first imported, so the
// patches go where curve.js looks things up at call time: its module object as libsignal's own files
// require it, and curve25519-js's `verify`.
// Only for measuring: it relies on Node ignoring `x` when importing an X25519 private JWK.
import { createPrivateKey, createPublicKey, diffieHellman } from 'node:crypto'
import { createRequire } from 'node:module'
import { xeddsaVerify } from '@status-tracker/emulator/xeddsa'

interface CurveJs { verify: (pub: Uint8Array, msg: Uint8Array, sig: Uint8Array) => boolean }

interface Curve {
  calculateAgreement: (pubKey: Buffer, privKey: Buffer) => Buffer
  generateKeyPair: () => { pubKey: Buffer, privKey: Buffer }
  calculateSignature: (privKey: Buffer, msg: Buffer) => Buffer
}

const require = createRequire(createRequire(import.meta.url).resolve('libsignal/src/curve.js'))
const curve = require('./curve.js') as Curve
const curveJs = require('curve25519-js') as CurveJs
const original = { ...curve }
const UNUSED_X = Buffer.alloc(32).toString('base64url')

function rawPublic (pubKey: Buffer): Buffer | null {
  if (!Buffer.isBuffer(pubKey)) return null
  const raw = pubKey.length === 33 && pubKey[0] === 5 ? pubKey.subarray(1) : pubKey
  return raw.length === 32 ? raw : null
}

function calculateAgreement (pubKey: Buffer, privKey: Buffer): Buffer {
  const pub = rawPublic(pubKey)
  if (pub === null || !Buffer.isBuffer(privKey) || privKey.length !== 32) return original.calculateAgreement(pubKey, privKey)
  return diffieHellman({
    privateKey: createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d: privKey.toString('base64url'), x: UNUSED_X }, format: 'jwk' }),
    publicKey: createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: pub.toString('base64url') }, format: 'jwk' })
  })
}

const pureJsVerify = curveJs.verify
function verify (pub: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean {
  return pub?.length === 32 && sig?.length === 64 && msg !== undefined ? xeddsaVerify(pub, msg, sig) : pureJsVerify(pub, msg, sig)
}

// same answers as libsignal's own, or no experiment
const a = original.generateKeyPair()
const b = original.generateKeyPair()
const message = Buffer.from('native-curve self-check')
const signature = original.calculateSignature(a.privKey, message)
const tampered = Buffer.from(signature)
tampered[5] ^= 1
if (!calculateAgreement(b.pubKey, a.privKey).equals(original.calculateAgreement(b.pubKey, a.privKey)) ||
  !verify(a.pubKey.subarray(1), message, signature) || verify(a.pubKey.subarray(1), message, tampered) ||
  !pureJsVerify(a.pubKey.subarray(1), message, signature) || pureJsVerify(a.pubKey.subarray(1), message, tampered)) {
  throw new Error('native-curve experiment: results differ from libsignal, not applied')
}
curve.calculateAgreement = calculateAgreement
curveJs.verify = verify
