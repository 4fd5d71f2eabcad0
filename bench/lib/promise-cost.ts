/**
 * One measurement of bench/scale.ts, in a process of its own (an AsyncLocalStorage that was entered stays
 * in Node 20's storage list for the life of the process, so the variants cannot share one):
 *
 *   node --import tsx bench/lib/promise-cost.ts <library|shared> <N>
 *
 * N sessions' key stores as the platform builds them (createAuthStore over an in-memory AuthStateStore,
 * auth.open(id).state.keys), each made transaction-capable as its socket would make it: `library` with
 * rc14's addTransactionCapability (one AsyncLocalStorage each), `shared` with the service's
 * withSharedTransactions (one for all). Each store runs one transaction (a linked session decrypts or
 * uploads pre-keys at once), then the process times a fixed number of awaited promises, five rounds,
 * and prints `{ nsPerPromise, rounds }` as JSON on its last line: the best round's time per promise.
 */
import { addTransactionCapability, type SignalKeyStoreWithTransaction } from '@whiskeysockets/baileys'
import type { ILogger } from '@whiskeysockets/baileys/lib/Utils/logger.js'
import { createAuthStore } from '../../src/platform/auth-state.js'
import { withSharedTransactions } from '../../src/platform/baileys/index.js'
import { silentLogger } from '../../src/platform/baileys/check-helpers.js'
import type { AuthStateStore } from '../../src/db/stores/auth-state.js'

const [variant, nText] = process.argv.slice(2)
const n = Number(nText)
if ((variant !== 'library' && variant !== 'shared') || !Number.isInteger(n) || n < 0) {
  console.error('usage: promise-cost.ts <library|shared> <N>')
  process.exit(2)
}
const SMOKE = process.env.BENCH_SMOKE === '1'
const ROUNDS = SMOKE ? 3 : 5
/** each round about this long: a fixed count would take minutes where a promise costs 100 µs */
const ROUND_NS = SMOKE ? 30e6 : 300e6

const memory: AuthStateStore = {
  load: async () => ({ creds: undefined, keys: [] }),
  readKeys: async () => [],
  writeCreds: async () => {},
  writeKeys: async () => {},
  clear: async () => {}
}
const logger = silentLogger as unknown as ILogger
const opts = { maxCommitRetries: 10, delayBetweenTriesMs: 3000 }
const auth = createAuthStore(memory, (err) => { throw err })
const stores: SignalKeyStoreWithTransaction[] = []
for (let i = 0; i < n; i++) {
  const id = `s${i}`
  await auth.prepare(id)
  const keys = auth.open(id).state.keys
  stores.push(variant === 'library' ? addTransactionCapability(keys, logger, opts) : withSharedTransactions(keys, logger, opts))
}
for (const [i, keys] of stores.entries()) {
  await keys.transaction(async () => { await keys.set({ session: { [`peer${i}`]: new Uint8Array([1]) } }) }, `peer${i}`)
}

/** `count` awaited promises, one after the other, as an async function's awaits make them; ns each */
async function awaitMany (count: number): Promise<number> {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < count; i++) await new Promise<number>((resolve) => { resolve(i) })
  return Number(process.hrtime.bigint() - t0) / count
}

// warm-up, and the count that makes a round about ROUND_NS
const promises = Math.max(500, Math.min(500_000, Math.round(ROUND_NS / await awaitMany(2000))))
const rounds: number[] = []
for (let r = 0; r < ROUNDS; r++) rounds.push(await awaitMany(promises))
console.log(JSON.stringify({ variant, n, nsPerPromise: Math.min(...rounds), promises, rounds: rounds.map((x) => Math.round(x)), node: process.version }))
