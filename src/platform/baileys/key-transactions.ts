import { AsyncLocalStorage } from 'node:async_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  DEFAULT_CONNECTION_CONFIG,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
  type SignalKeyStoreWithTransaction,
  type TransactionCapabilityOptions,
  type WASocket
} from '@whiskeysockets/baileys'
import { PreKeyManager } from '@whiskeysockets/baileys/lib/Utils/pre-key-manager.js'
import type { ILogger } from '@whiskeysockets/baileys/lib/Utils/logger.js'

// rc14's addTransactionCapability (lib/Utils/auth-utils.js) gives every socket's key store an
// AsyncLocalStorage of its own. On Node 20 and 22 every enabled instance is visited for every promise the
// process creates (async_hooks' storage list, never shrunk: a closed socket's stays), so each session made
// every promise of every other one slower: at 800 sessions 67 % of the service's CPU went there (issue 33).
// Here every socket's transactions share ONE AsyncLocalStorage, whose store is a chain of frames, one per
// key store in a transaction: a store sees only its own frame, so two sessions' transactions never mix, as
// with one storage each. The rest is rc14's wrapper as it is (per-key mutex, nested transactions joining the
// outer one, writes committed together when the outermost ends, with retries; pre-keys through its
// PreKeyManager). Assumption `shared-key-transactions`; speed trick of the same name (src/speed-tricks.ts).

type KeyType = keyof SignalDataTypeMap

/** key type → id → value (null: deleted), as a transaction holds them */
type Rows = Partial<Record<KeyType, Record<string, unknown>>>

/** one key store's transaction under way: what it read and what it will write */
interface TxContext {
  cache: Rows
  mutations: Rows
  dbQueries: number
}

/** the transactions the running code is inside, innermost first, at most one per key store */
interface Frame {
  owner: object
  ctx: TxContext
  parent: Frame | undefined
}

/** The one transaction context of the process, whatever the number of sessions. */
const transactions = new AsyncLocalStorage<Frame>()

function contextOf (owner: object): TxContext | undefined {
  for (let f = transactions.getStore(); f !== undefined; f = f.parent) if (f.owner === owner) return f.ctx
  return undefined
}

/** FIFO locks by name, forgotten when nobody holds or waits for them (async-mutex's Mutex per key in rc14). */
class KeyedLocks {
  readonly #held = new Map<string, { tail: Promise<void>, users: number }>()

  async run<T> (key: string, work: () => Promise<T>): Promise<T> {
    let entry = this.#held.get(key)
    if (entry === undefined) { entry = { tail: Promise.resolve(), users: 0 }; this.#held.set(key, entry) }
    entry.users++
    const previous = entry.tail
    let release = (): void => {}
    entry.tail = new Promise<void>((resolve) => { release = resolve })
    try {
      await previous
      return await work()
    } finally {
      release()
      if (--entry.users === 0) this.#held.delete(key)
    }
  }
}

/**
 * `state` with transactions, as rc14's addTransactionCapability(state, logger, options) makes it, but in
 * the process' one shared transaction context.
 */
export function withSharedTransactions (state: SignalKeyStore, logger: ILogger, options: TransactionCapabilityOptions): SignalKeyStoreWithTransaction {
  const owner = {}
  /** transactions by key, and reads of missing keys inside a transaction by type (one map in rc14 too) */
  const txLocks = new KeyedLocks()
  /** writes outside a transaction, one at a time per key type */
  const writeQueues = new KeyedLocks()
  const preKeys = new PreKeyManager(state, logger)

  async function commit (mutations: Rows): Promise<void> {
    if (Object.keys(mutations).length === 0) { logger.trace('no mutations in transaction'); return }
    logger.trace('committing transaction')
    for (let attempt = 0; attempt < options.maxCommitRetries; attempt++) {
      try {
        await state.set(mutations as SignalDataSet)
        logger.trace({ mutationCount: Object.keys(mutations).length }, 'committed transaction')
        return
      } catch (error) {
        const retriesLeft = options.maxCommitRetries - attempt - 1
        logger.warn(`failed to commit mutations, retries left=${retriesLeft}`)
        if (retriesLeft === 0) throw error
        await sleep(options.delayBetweenTriesMs)
      }
    }
  }

  return {
    get: async <T extends KeyType>(type: T, ids: string[]) => {
      const ctx = contextOf(owner)
      if (ctx === undefined) return await state.get(type, ids)
      const cached = ctx.cache[type] ?? {}
      const missing = ids.filter((id) => !(id in cached))
      if (missing.length > 0) {
        ctx.dbQueries++
        logger.trace({ type, count: missing.length }, 'fetching missing keys in transaction')
        const fetched = await txLocks.run(type, async () => await state.get(type, missing))
        ctx.cache[type] = Object.assign(ctx.cache[type] ?? {}, fetched)
      }
      const result: Record<string, SignalDataTypeMap[T]> = {}
      const values = (ctx.cache[type] ?? {}) as Record<string, SignalDataTypeMap[T] | null | undefined>
      for (const id of ids) {
        const value = values[id]
        if (value !== undefined && value !== null) result[id] = value
      }
      return result
    },
    set: async (data) => {
      const ctx = contextOf(owner)
      if (ctx === undefined) {
        const types = Object.keys(data) as KeyType[]
        if (types.includes('pre-key')) await preKeys.validateDeletions(data, 'pre-key')
        await Promise.all(types.map(async (type) => { await writeQueues.run(type, async () => { await state.set({ [type]: data[type] }) }) }))
        return
      }
      logger.trace({ types: Object.keys(data) }, 'caching in transaction')
      for (const type of Object.keys(data) as KeyType[]) {
        ctx.cache[type] ??= {}
        ctx.mutations[type] ??= {}
        if (type === 'pre-key') await preKeys.processOperations(data, type, ctx.cache as SignalDataSet, ctx.mutations as SignalDataSet, true)
        else {
          Object.assign(ctx.cache[type], data[type])
          Object.assign(ctx.mutations[type], data[type])
        }
      }
    },
    isInTransaction: () => contextOf(owner) !== undefined,
    transaction: async <T>(work: () => Promise<T>, key: string): Promise<T> => {
      if (contextOf(owner) !== undefined) {
        logger.trace('reusing existing transaction context')
        return await work()
      }
      return await txLocks.run(key, async () => {
        const ctx: TxContext = { cache: {}, mutations: {}, dbQueries: 0 }
        logger.trace('entering transaction')
        try {
          const result = await transactions.run({ owner, ctx, parent: transactions.getStore() }, work)
          await commit(ctx.mutations)
          logger.trace({ dbQueries: ctx.dbQueries }, 'transaction completed')
          return result
        } catch (error) {
          logger.error({ error }, 'transaction failed, rolling back')
          throw error
        }
      })
    }
  }
}

/**
 * Puts the socket's key store (`sock.authState.keys`, the object rc14's makeSocket built with
 * addTransactionCapability and handed to its signal repository) on the shared transaction context:
 * its methods are replaced before any transaction ran, so the socket's own AsyncLocalStorage is never
 * entered (never enabled, never visited). `keys` is the store the socket was given (`auth.keys`).
 * Assumption `shared-key-transactions`.
 */
export function shareKeyTransactions (
  sock: WASocket, keys: SignalKeyStore, logger: ILogger, options: TransactionCapabilityOptions = DEFAULT_CONNECTION_CONFIG.transactionOpts
): void {
  const wrapped = sock.authState.keys as Partial<SignalKeyStoreWithTransaction> | undefined
  if (wrapped === undefined || typeof wrapped.transaction !== 'function' || typeof wrapped.isInTransaction !== 'function' || wrapped.isInTransaction()) {
    throw new Error('Baileys assumption "shared-key-transactions" broke: sock.authState.keys is not an idle transaction-capable key store')
  }
  Object.assign(wrapped, withSharedTransactions(keys, logger, options))
}
