/**
 * Per-function timing of libsignal's curve.js, stock (the patch reversed on a copy, as the send-many
 * control uses it) against the patched one installed in node_modules, in this one process. Not part of
 * `npm run bench`: the figures behind patches/README.md.
 *
 *   npx tsx bench/libsignal-curve.ts [rounds=2000]
 */
import { randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { stockLibsignal } from './lib/bare-baileys.js'

interface Curve {
  generateKeyPair: () => { pubKey: Buffer, privKey: Buffer }
  calculateAgreement: (pubKey: Buffer, privKey: Buffer) => Buffer
  calculateSignature: (privKey: Buffer, msg: Buffer) => Buffer
  verifySignature: (pubKey: Buffer, msg: Buffer, sig: Buffer, isInit?: boolean) => boolean
}

const rounds = Number(process.argv[2] ?? 2000)
const stock = stockLibsignal()
const require = createRequire(import.meta.url)
const curves: Record<string, Curve> = {
  stock: require(join(stock.dir, 'src', 'curve.js')) as Curve,
  patched: require('libsignal/src/curve.js') as Curve
}

/** ms per call, after a warm-up */
function time (n: number, fn: (i: number) => unknown): number {
  for (let i = 0; i < Math.min(n, 100); i++) fn(i)
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) fn(i)
  return Number(process.hrtime.bigint() - t0) / 1e6 / n
}

const msg = randomBytes(100)
const results: Record<string, Record<string, number>> = {}
for (const [name, curve] of Object.entries(curves)) {
  // keys neither process has seen: more of them than the patch's private-key cache holds
  const peers = Array.from({ length: 500 }, () => curve.generateKeyPair())
  const ours = Array.from({ length: 500 }, () => ({ privKey: Buffer.from(curve.generateKeyPair().privKey) }))
  const identity = curve.generateKeyPair()
  const signed = Array.from({ length: 20 }, (_, i) => curve.calculateSignature(peers[i].privKey, msg))
  results[name] = {
    'generateKeyPair': time(rounds, () => curve.generateKeyPair()),
    'calculateAgreement, keys not seen before': time(rounds, (i) => curve.calculateAgreement(peers[i % 500].pubKey, ours[(i * 7) % 500].privKey)),
    'calculateAgreement, same private key (identity)': time(rounds, (i) => curve.calculateAgreement(peers[i % 500].pubKey, Buffer.from(identity.privKey))),
    // initOutgoing + initSession for one new device: 2 key pairs, 5 agreements (libsignal's session_builder.js)
    'session set-up for one new device (2 key pairs, 5 agreements)': time(Math.ceil(rounds / 5), (i) => {
      const peer = peers[i % 500]
      const base = curve.generateKeyPair()
      curve.calculateAgreement(peer.pubKey, identity.privKey)
      curve.calculateAgreement(peers[(i + 1) % 500].pubKey, base.privKey)
      curve.calculateAgreement(peer.pubKey, base.privKey)
      curve.calculateAgreement(peers[(i + 2) % 500].pubKey, base.privKey)
      curve.calculateAgreement(peer.pubKey, curve.generateKeyPair().privKey)
    }),
    'verifySignature (XEdDSA)': time(40, (i) => curve.verifySignature(peers[i % 20].pubKey, msg, signed[i % 20])),
    'calculateSignature (XEdDSA, unchanged)': time(20, (i) => curve.calculateSignature(peers[i % 20].privKey, msg))
  }
}
stock.rm()
console.log(`node ${process.version}, ${rounds} rounds\n`)
console.log(`${'function'.padEnd(64)} ${'stock ms'.padStart(9)} ${'patched ms'.padStart(11)} ${'speed-up'.padStart(9)}`)
for (const fn of Object.keys(results.stock)) {
  const [a, b] = [results.stock[fn], results.patched[fn]]
  console.log(`${fn.padEnd(64)} ${a.toFixed(3).padStart(9)} ${b.toFixed(3).padStart(11)} ${(a / b).toFixed(1).padStart(8)}×`)
}
