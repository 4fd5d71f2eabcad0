import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import { test, type TestContext } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { addTransactionCapability, initAuthCreds, type SignalDataSet, type SignalKeyStore, type SignalKeyStoreWithTransaction } from '@whiskeysockets/baileys'
import { makeLibSignalRepository } from '@whiskeysockets/baileys/lib/Signal/libsignal.js'
import { createRequire } from 'node:module'
import { withSharedTransactions } from '../../src/platform/baileys/index.js'
import { silentLogger } from '../../src/platform/baileys/check-helpers.js'
import { startStack } from '../stack.js'
import type { ILogger } from '@whiskeysockets/baileys/lib/Utils/logger.js'

// Assumption `shared-key-transactions` (src/platform/baileys/key-transactions.ts): every socket's Signal
// key transactions run in ONE AsyncLocalStorage instead of one per socket (issue 33), with rc14's
// semantics kept: a store sees only its own transaction (two sessions' never mix), nested ones join the
// outer one, the writes commit together when the outermost ends, and nothing is written when it throws.
// The same scenarios run against Baileys' own addTransactionCapability, so a difference shows. Then, through
// real Baileys against the emulator, two linked sessions send and decrypt with only the shared storage
// ever entered (and, with the trick off, one per socket: the check can fail).

const logger = silentLogger as unknown as ILogger
const OPTS = { maxCommitRetries: 3, delayBetweenTriesMs: 1 }

type Make = (state: SignalKeyStore) => SignalKeyStoreWithTransaction
const IMPLEMENTATIONS: Array<[string, Make]> = [
  ['shared', (state) => withSharedTransactions(state, logger, OPTS)],
  ['Baileys rc14', (state) => addTransactionCapability(state, logger, OPTS)]
]

/** An in-memory key store recording every write it was given, and failing the next `failures` writes. */
function memoryStore (): SignalKeyStore & { writes: SignalDataSet[], rows: Map<string, unknown>, failures: number } {
  const rows = new Map<string, unknown>()
  const store = {
    writes: [] as SignalDataSet[],
    rows,
    failures: 0,
    get: async (type: string, ids: string[]) => {
      await sleep(1)
      return Object.fromEntries(ids.filter((id) => rows.has(`${type}/${id}`)).map((id) => [id, rows.get(`${type}/${id}`)]))
    },
    set: async (data: SignalDataSet) => {
      await sleep(1)
      if (store.failures > 0) { store.failures--; throw new Error('disk full') }
      store.writes.push(structuredClone(data))
      for (const [type, entries] of Object.entries(data)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          if (value === null) rows.delete(`${type}/${id}`)
          else rows.set(`${type}/${id}`, value)
        }
      }
    }
  }
  return store as unknown as SignalKeyStore & typeof store
}

const session = (id: string): SignalDataSet => ({ session: { [id]: new Uint8Array([id.length]) } })

for (const [name, make] of IMPLEMENTATIONS) {
  test(`${name}: a transaction commits its writes together, once, when the outermost one ends; nested ones join it`, async () => {
    const state = memoryStore()
    const keys = make(state)
    const seen: unknown[] = []
    const result = await keys.transaction(async () => {
      assert.equal(keys.isInTransaction(), true)
      await keys.set(session('a'))
      await keys.transaction(async () => {
        await keys.set(session('b'))
        seen.push(Object.keys(await keys.get('session', ['a', 'b'])))
      }, 'other-key')
      assert.equal(state.writes.length, 0, 'nothing written before the outermost transaction ends')
      return 42
    }, 'jid-1')
    assert.equal(result, 42)
    assert.equal(keys.isInTransaction(), false)
    assert.deepEqual(seen, [['a', 'b']])
    assert.deepEqual(state.writes.map((w) => Object.keys(w.session ?? {})), [['a', 'b']])
  })

  test(`${name}: a transaction that throws writes nothing, and the error reaches the caller`, async () => {
    const state = memoryStore()
    const keys = make(state)
    await assert.rejects(keys.transaction(async () => {
      await keys.set(session('a'))
      await keys.transaction(async () => { await keys.set(session('b')) }, 'jid-1')
      throw new Error('decrypt failed')
    }, 'jid-1'), /decrypt failed/)
    assert.deepEqual(state.writes, [])
    assert.deepEqual(await keys.get('session', ['a', 'b']), {})
    // a failed commit is retried, then given up on with the store's error
    state.failures = 1
    await keys.transaction(async () => { await keys.set(session('c')) }, 'jid-1')
    assert.deepEqual(Object.keys(await keys.get('session', ['c'])), ['c'])
    state.failures = OPTS.maxCommitRetries
    await assert.rejects(keys.transaction(async () => { await keys.set(session('d')) }, 'jid-1'), /disk full/)
  })

  test(`${name}: two sessions' transactions, concurrent and one inside the other, never see or write each other's keys`, async () => {
    const stateA = memoryStore()
    const stateB = memoryStore()
    const a = make(stateA)
    const b = make(stateB)
    // concurrent, interleaved at every await
    await Promise.all([
      a.transaction(async () => {
        await a.set(session('from-a'))
        await sleep(5)
        assert.equal(b.isInTransaction(), false, "b is not in a's transaction")
        assert.deepEqual(await b.get('session', ['from-b']), {}, "b's uncommitted key is not visible from a's transaction")
        await a.set(session('from-a-2'))
      }, 'jid'),
      b.transaction(async () => {
        await sleep(2)
        await b.set(session('from-b'))
        assert.deepEqual(await a.get('session', ['from-a']), {}, "a's uncommitted key is not visible from b's transaction")
        await sleep(5)
      }, 'jid')
    ])
    assert.deepEqual(stateA.writes.map((w) => Object.keys(w.session ?? {})), [['from-a', 'from-a-2']])
    assert.deepEqual(stateB.writes.map((w) => Object.keys(w.session ?? {})), [['from-b']])
    // b's transaction started inside a's: each commits its own, b's when b's ends, a's when a's ends
    await a.transaction(async () => {
      await a.set(session('outer-a'))
      await b.transaction(async () => {
        assert.equal(a.isInTransaction(), true)
        assert.equal(b.isInTransaction(), true)
        await b.set(session('inner-b'))
        await a.set(session('outer-a-2'))
      }, 'jid')
      assert.deepEqual(stateB.writes.map((w) => Object.keys(w.session ?? {})).at(-1), ['inner-b'])
      assert.equal(stateA.writes.length, 1, "a's writes wait for a's end")
    }, 'jid')
    assert.deepEqual(stateA.writes.map((w) => Object.keys(w.session ?? {})).at(-1), ['outer-a', 'outer-a-2'])
  })

  test(`${name}: transactions of one store under the same key run one at a time, under other keys side by side`, async () => {
    const keys = make(memoryStore())
    const log: string[] = []
    const tx = async (label: string, key: string): Promise<void> => {
      await keys.transaction(async () => { log.push(`${label}+`); await sleep(10); log.push(`${label}-`) }, key)
    }
    await Promise.all([tx('1', 'k'), tx('2', 'k'), tx('3', 'other')])
    assert.ok(log.indexOf('1-') < log.indexOf('2+'), log.join(' '))
    assert.ok(log.indexOf('3+') < log.indexOf('1-'), log.join(' '))
  })

  test(`${name}: pre-key deletions are checked against what exists (PreKeyManager), in and out of a transaction`, async () => {
    const state = memoryStore()
    const keys = make(state)
    const pair = { public: new Uint8Array([1]), private: new Uint8Array([2]) }
    await keys.set({ 'pre-key': { 1: pair, 2: pair } })
    await keys.set({ 'pre-key': { 1: null, 9: null } })
    assert.deepEqual([...state.rows.keys()].sort(), ['pre-key/2'])
    await keys.transaction(async () => {
      await keys.get('pre-key', ['2'])
      await keys.set({ 'pre-key': { 2: null, 8: null } })
    }, 'prekeys')
    assert.deepEqual([...state.rows.keys()], [])
    assert.deepEqual(state.writes.at(-1), { 'pre-key': { 2: null } })
  })
}

/** A contact's prekey bundle as the server hands it out (Baileys' injectE2ESession input), from libsignal's own curve. */
function bundle (): Parameters<ReturnType<typeof makeLibSignalRepository>['injectE2ESession']>[0]['session'] {
  const curve = createRequire(import.meta.url)('libsignal/src/curve.js') as {
    generateKeyPair: () => { pubKey: Buffer, privKey: Buffer }
    calculateSignature: (privKey: Buffer, msg: Buffer) => Buffer
  }
  const identity = curve.generateKeyPair()
  const signed = curve.generateKeyPair()
  return {
    registrationId: 4242,
    identityKey: identity.pubKey,
    signedPreKey: { keyId: 1, publicKey: signed.pubKey, signature: curve.calculateSignature(identity.privKey, signed.pubKey) },
    preKey: { keyId: 7, publicKey: curve.generateKeyPair().pubKey }
  }
}

for (const [name, make] of IMPLEMENTATIONS) {
  // patches/libsignal+6.0.0.patch, queue_job.js: libsignal runs one address's jobs one at a time for the whole
  // process, and a job queued while another session's job for that address ran used to run in that session's
  // async context. Two linked accounts writing to one contact at once: the second one's encrypt ran outside
  // its own transaction, did not see the session it had just set up ("No sessions"), and Baileys left the
  // contact out of the post.
  test(`${name}: a session set up in a transaction is there for its encrypt while another store's job for the same contact runs`, async () => {
    const slowState = memoryStore()
    const slowGet = slowState.get.bind(slowState)
    slowState.get = (async (type: string, ids: string[]) => { await sleep(40); return await slowGet(type as never, ids) }) as typeof slowState.get
    const repo = (state: SignalKeyStore): { keys: SignalKeyStoreWithTransaction, signal: ReturnType<typeof makeLibSignalRepository> } => {
      const keys = make(state)
      return { keys, signal: makeLibSignalRepository({ creds: initAuthCreds(), keys }, logger) }
    }
    const a = repo(slowState)
    const b = repo(memoryStore())
    const contact = '100000000000777@lid'
    let injected = (): void => {}
    let otherStarted = (): void => {}
    const bInjected = new Promise<void>((resolve) => { injected = resolve })
    const aStarted = new Promise<void>((resolve) => { otherStarted = resolve })
    // B sets up its session with the contact inside its transaction; then A's job for the same contact starts
    // (its store answers each read after 40 ms, so the job holds the address a while); then B encrypts
    const posting = b.keys.transaction(async () => {
      await b.signal.injectE2ESession({ jid: contact, session: bundle() })
      injected()
      await aStarted
      await sleep(5)
      return await b.signal.encryptMessage({ jid: contact, data: Buffer.from('hello') })
    }, 'b')
    const other = (async () => {
      await bInjected
      await a.keys.transaction(async () => {
        const job = a.signal.injectE2ESession({ jid: contact, session: bundle() })
        otherStarted()
        await job
      }, 'a')
    })()
    const [sent] = await Promise.all([posting, other])
    assert.equal(sent.type, 'pkmsg')
    assert.ok(sent.ciphertext.length > 0)
  })
}

/** every AsyncLocalStorage whose run() is called while `t` lasts */
function storagesEntered (t: TestContext): Set<AsyncLocalStorage<unknown>> {
  const entered = new Set<AsyncLocalStorage<unknown>>()
  const run = AsyncLocalStorage.prototype.run
  AsyncLocalStorage.prototype.run = function (this: AsyncLocalStorage<unknown>, ...args: Parameters<typeof run>) {
    entered.add(this)
    return run.apply(this, args)
  } as typeof run
  t.after(() => { AsyncLocalStorage.prototype.run = run })
  return entered
}

test('one AsyncLocalStorage for any number of key stores; Baileys rc14 makes one per store', async (t) => {
  const entered = storagesEntered(t)
  for (const [name, make] of IMPLEMENTATIONS) {
    entered.clear()
    const stores = Array.from({ length: 20 }, () => make(memoryStore()))
    await Promise.all(stores.map(async (keys, i) => { await keys.transaction(async () => { await keys.set(session(`s${i}`)) }, 'jid') }))
    assert.equal(entered.size, name === 'shared' ? 1 : 20, name)
  }
})

async function twoSessionsSendAndDecrypt (t: TestContext, env: Record<string, string>): Promise<number> {
  const entered = storagesEntered(t)
  const s = await startStack(t, env)
  const alice = s.emu.addContact({ number: '15557300011' })
  const sessions = [['kt-a', '15557300001'], ['kt-b', '15557300002']] as const
  for (const [id, number] of sessions) await s.link(id, number)
  for (const [id] of sessions) {
    // a status out (Signal sessions set up and sender keys stored in transactions), a reply in (decrypted in one)
    const sent = await s.app.statuses.send(id, { type: 'text', content: `from ${id}`, targetNumbers: alice.number })
    await s.emu.waitForStatus((r) => r.id === sent.platformMessageId && r.decrypted, 15_000)
    const reply = await s.emu.reply(sent.platformMessageId, { from: alice.number, text: `hi ${id}` })
    const ev = await s.events.next('status-reply', (p) => p.reply.messageId === reply.messageId, 15_000)
    assert.deepEqual([ev.sessionId, ev.reply.text], [id, `hi ${id}`])
    assert.deepEqual((await s.app.statuses.replies(id, sent.statusId)).map((r) => r.text), [`hi ${id}`])
  }
  return entered.size
}

test('through real Baileys: two sessions link, send and decrypt with only the shared storage entered', { timeout: 120_000 }, async (t) => {
  assert.equal(await twoSessionsSendAndDecrypt(t, { SPEED_TRICKS_OFF: '' }), 1)
})

test('with SPEED_TRICKS_OFF=shared-key-transactions each socket enters its own (what the shared one replaces)', { timeout: 120_000 }, async (t) => {
  assert.ok(await twoSessionsSendAndDecrypt(t, { SPEED_TRICKS_OFF: 'shared-key-transactions' }) >= 2)
})
