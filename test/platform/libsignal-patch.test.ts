import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import fc from 'fast-check'

// patches/libsignal+6.0.0.patch (patches/README.md): libsignal's curve.js on Node's native X25519 and
// Ed25519 with cached KeyObjects. Every answer must be the one curve25519-js (the pure-JS reference
// libsignal ships with) gives for the same bytes.

interface Curve {
  generateKeyPair: () => { pubKey: Buffer, privKey: Buffer }
  calculateAgreement: (pubKey: Buffer, privKey: Buffer) => Buffer
  calculateSignature: (privKey: Buffer, msg: Buffer) => Buffer
  verifySignature: (pubKey: Buffer, msg: Buffer, sig: Buffer, isInit?: boolean) => boolean
}
interface CurveJs {
  sharedKey: (priv: Uint8Array, pub: Uint8Array) => Uint8Array
  generateKeyPair: (seed: Uint8Array) => { private: Uint8Array, public: Uint8Array }
  verify: (pub: Uint8Array, msg: Uint8Array, sig: Uint8Array) => boolean
}

const require = createRequire(import.meta.url)
const curvePath = require.resolve('libsignal/src/curve.js')
const curve = require(curvePath) as Curve
const curveJs = createRequire(curvePath)('curve25519-js') as CurveJs
const prefixed = (raw: Uint8Array): Buffer => Buffer.concat([Buffer.from([5]), raw])
const runs = { numRuns: 300 }

test('the installed libsignal carries the patch (npm ci ran patch-package)', () => {
  assert.match(readFileSync(curvePath, 'utf8'), /nativePrivateKey/)
  // and queue_job.js's jobs in their callers' contexts (test/platform/key-transactions.test.ts shows why)
  assert.match(readFileSync(require.resolve('libsignal/src/queue_job.js'), 'utf8'), /AsyncResource\.bind\(awaitable\)/)
})

test('generateKeyPair: native keys with libsignal\'s shapes; the public key is curve25519-js\'s for that private key', () => {
  for (let i = 0; i < 300; i++) {
    const { pubKey, privKey } = curve.generateKeyPair()
    assert.ok(Buffer.isBuffer(pubKey) && Buffer.isBuffer(privKey))
    assert.equal(pubKey.length, 33)
    assert.equal(pubKey[0], 5)
    assert.equal(privKey.length, 32)
    assert.deepEqual(pubKey.subarray(1), Buffer.from(curveJs.generateKeyPair(privKey).public))
  }
})

test('calculateAgreement equals curve25519-js for any private bytes and public key, cached or not', () => {
  fc.assert(fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (a, b) => {
    const priv = Buffer.from(a)
    // a real peer key (on the curve) from b's private bytes, and b's raw bytes as a public key too
    const peer = Buffer.from(curveJs.generateKeyPair(b).public)
    for (const pub of [peer, Buffer.from(b)]) {
      let want: Buffer | null
      try { want = Buffer.from(curveJs.sharedKey(priv, pub)) } catch { want = null }
      let got: Buffer | null
      try { got = curve.calculateAgreement(prefixed(pub), priv) } catch { got = null }
      // OpenSSL refuses an all-zero result (a small-order public key); curve25519-js returns zeros
      if (got === null && want !== null && want.every((x) => x === 0)) continue
      assert.deepEqual(got, want)
      // again, now from the cache, with fresh Buffers of the same bytes
      if (want !== null) assert.deepEqual(curve.calculateAgreement(prefixed(Buffer.from(pub)), Buffer.from(priv)), want)
    }
  }), runs)
})

test('calculateAgreement: both sides agree, also after the caches evicted the keys', () => {
  const pairs = Array.from({ length: 400 }, () => curve.generateKeyPair())
  const first = pairs.map((p, i) => curve.calculateAgreement(pairs[(i + 1) % pairs.length].pubKey, p.privKey))
  pairs.forEach((p, i) => {
    const q = pairs[(i + 1) % pairs.length]
    const expected = Buffer.from(curveJs.sharedKey(p.privKey, q.pubKey.subarray(1)))
    assert.deepEqual(first[i], expected)
    assert.deepEqual(curve.calculateAgreement(p.pubKey, q.privKey), expected)
    assert.deepEqual(curve.calculateAgreement(q.pubKey, p.privKey), expected)
  })
})

test('verifySignature: libsignal\'s signatures verify, tampered ones do not, exactly as in curve25519-js', () => {
  // 16 rounds: each checks five signatures with curve25519-js too, at about 20 ms each (40 rounds took 13 s of CPU)
  for (let i = 0; i < 16; i++) {
    const { pubKey, privKey } = curve.generateKeyPair()
    const msg = randomBytes(1 + (i * 37) % 200)
    const sig = curve.calculateSignature(privKey, msg)
    assert.equal(curve.verifySignature(pubKey, msg, sig), true)
    assert.equal(curveJs.verify(pubKey.subarray(1), msg, sig), true)

    const badSig = Buffer.from(sig)
    badSig[i % 64] ^= 1 << (i % 8)
    const badMsg = Buffer.from(msg)
    badMsg[i % msg.length] ^= 0x10
    const other = curve.generateKeyPair().pubKey
    for (const [k, m, s] of [[pubKey, msg, badSig], [pubKey, badMsg, sig], [other, msg, sig]] as const) {
      const want = curveJs.verify(k.subarray(1), m, s)
      assert.equal(want, false)
      assert.equal(curve.verifySignature(k, m, s), want)
    }
    // the sign bit in the signature's last byte picks the Edwards key: flipping it must fail
    const flipped = Buffer.from(sig)
    flipped[63] ^= 0x80
    assert.equal(curve.verifySignature(pubKey, msg, flipped), curveJs.verify(pubKey.subarray(1), msg, flipped))
  }
})

test('verifySignature on odd public keys (u = 0, 1, p - 1, ≥ p, top bit set) answers as curve25519-js', () => {
  const p = (1n << 255n) - 19n
  const le = (n: bigint): Buffer => { const b = Buffer.alloc(32); let v = n; for (let i = 0; i < 32; i++) { b[i] = Number(v & 0xffn); v >>= 8n } return b }
  const odd = [0n, 1n, p - 1n, p, p + 1n, (1n << 255n) - 1n, (1n << 255n) | 9n].map((n) => le(n % (1n << 256n)))
  const msg = Buffer.from('odd keys')
  const { privKey } = curve.generateKeyPair()
  const sig = curve.calculateSignature(privKey, msg)
  for (const k of odd) {
    for (const s of [sig, randomBytes(64)]) {
      assert.equal(curve.verifySignature(prefixed(k), msg, s), curveJs.verify(k, msg, s), `key ${k.toString('hex')}`)
    }
  }
})

test('verifySignature: the isInit shortcut and the input checks are libsignal\'s', () => {
  const { pubKey } = curve.generateKeyPair()
  assert.equal(curve.verifySignature(pubKey, Buffer.from('m'), randomBytes(64), true), true)
  assert.throws(() => curve.verifySignature(pubKey, Buffer.from('m'), randomBytes(63)), /Invalid signature/)
  assert.throws(() => curve.verifySignature(randomBytes(31), Buffer.from('m'), randomBytes(64)), /Invalid public key/)
  assert.throws(() => curve.calculateAgreement(pubKey, randomBytes(31)), /Incorrect private key length/)
})
