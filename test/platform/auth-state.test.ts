import assert from 'node:assert/strict'
import { storesOf } from '../../src/db/stores/index.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { BufferJSON, proto } from '@whiskeysockets/baileys'
import { openDatabase, type SqliteHandle as DbHandle } from '../../src/db/connection.js'
import { authStateStore } from '../../src/db/stores/auth-state.js'
import { createAuthStore, type AuthStore, type SessionAuth } from '../../src/platform/auth-state.js'
import { insertSession } from '../support/sessions.js'

async function tempDb (t: { after: (fn: () => Promise<void>) => void }): Promise<DbHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'st-auth-'))
  const handle = await openDatabase(join(dir, 'test.db'))
  t.after(async () => {
    await handle.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return handle
}

/** the platform's adapter over the database's store; a failed write throws where it is awaited */
const storeOf = (handle: DbHandle): AuthStore => createAuthStore(authStateStore(handle.db), () => {})

/** a session's auth as a new process opens it: rows loaded first */
async function opened (handle: DbHandle, id: string, store = storeOf(handle)): Promise<SessionAuth> {
  await store.prepare(id)
  return store.open(id)
}

const countKeys = (handle: DbHandle, id: string): number =>
  handle.sqlite.prepare<[string], number>('SELECT count(*) FROM auth_keys WHERE session_id = ?').pluck().get(id) ?? -1

test('creds and keys survive a reopen (a new process) with Buffers and protos intact', async (t) => {
  const handle = await tempDb(t)
  await insertSession(handle, 's1')
  const auth = await opened(handle, 's1')
  const { creds, keys } = auth.state
  creds.me = { id: '15551230000:3@s.whatsapp.net', lid: '100000000000001:3@lid' }
  await auth.saveCreds(creds)
  await keys.set({
    session: { 'a.0': Buffer.from([1, 2, 3]) },
    'pre-key': { 1: { public: Buffer.alloc(32, 7), private: Buffer.alloc(32, 8) } },
    'lid-mapping': { 15551230001: '100000000000002', '100000000000002_reverse': '15551230001' },
    'app-state-sync-key': { k1: proto.Message.AppStateSyncKeyData.fromObject({ keyData: Buffer.from('secret') }) }
  })

  const again = await opened(handle, 's1')
  assert.equal(again.state.creds.me?.id, '15551230000:3@s.whatsapp.net')
  assert.ok(Buffer.isBuffer(again.state.creds.noiseKey.public))
  assert.deepEqual(again.state.creds.noiseKey.public, creds.noiseKey.public)
  const sessions = await again.state.keys.get('session', ['a.0', 'missing'])
  assert.deepEqual(Object.keys(sessions), ['a.0'])
  assert.deepEqual([...sessions['a.0']], [1, 2, 3])
  const pre = await again.state.keys.get('pre-key', ['1'])
  assert.deepEqual(pre['1'].private, Buffer.alloc(32, 8))
  const map = await again.state.keys.get('lid-mapping', ['100000000000002_reverse'])
  assert.equal(map['100000000000002_reverse'], '15551230001')
  const app = await again.state.keys.get('app-state-sync-key', ['k1'])
  assert.ok(app.k1 instanceof proto.Message.AppStateSyncKeyData)
  assert.equal(Buffer.from(app.k1.keyData ?? []).toString(), 'secret')
})

test('keys.set is one transaction: a failing write leaves neither the rows nor the cache changed', async (t) => {
  const handle = await tempDb(t)
  await insertSession(handle, 's1')
  const auth = await opened(handle, 's1')
  await auth.state.keys.set({ session: { keep: Buffer.from([1]) } })
  // a trigger makes the second row of the batch fail after the first was written
  handle.sqlite.exec(`CREATE TRIGGER boom BEFORE INSERT ON auth_keys WHEN NEW.key_id = 'bad'
    BEGIN SELECT RAISE(ABORT, 'boom'); END`)
  await assert.rejects(async () => { await auth.state.keys.set({ session: { good: Buffer.from([2]), bad: Buffer.from([3]), keep: null } }) }, /boom/)
  assert.equal(countKeys(handle, 's1'), 1)
  const cached = await auth.state.keys.get('session', ['good', 'keep'])
  assert.deepEqual(Object.keys(cached), ['keep'])
  handle.sqlite.exec('DROP TRIGGER boom')

  await auth.state.keys.set({ session: { good: Buffer.from([2]), keep: null } })
  assert.equal(countKeys(handle, 's1'), 1)
  assert.deepEqual(Object.keys(await auth.state.keys.get('session', ['good', 'keep'])), ['good'])
})

test('after a creds write failed, recover starts over from the committed creds (the account Baileys set in memory is dropped)', async (t) => {
  const handle = await tempDb(t)
  await insertSession(handle, 's1')
  const auth = await opened(handle, 's1')
  const stored = auth.state.creds
  await auth.saveCreds(stored)
  assert.equal(await auth.recover(), false, 'nothing failed: nothing to recover')
  assert.equal(auth.state.creds, stored)
  handle.sqlite.exec(`CREATE TRIGGER boom BEFORE UPDATE ON auth_creds BEGIN SELECT RAISE(ABORT, 'boom'); END`)
  // what pair-success does: the account goes into the creds in memory, then their write is handed over
  stored.me = { id: '15551230000:3@s.whatsapp.net', lid: '100000000000001:3@lid' }
  stored.account = { details: Buffer.from([1]), accountSignatureKey: Buffer.from([2]), accountSignature: Buffer.from([3]), deviceSignature: Buffer.from([4]) }
  await assert.rejects(auth.saveCreds(stored), /boom/)
  assert.equal(auth.isLinked(), true, 'in memory the pairing looks done')

  assert.equal(await auth.recover(), true)
  assert.equal(auth.isLinked(), false, 'the database never held the account')
  assert.equal(auth.state.creds.me, undefined)
  assert.deepEqual(auth.state.creds.noiseKey.public, stored.noiseKey.public, 'the rest is what was committed')
  // the old socket's late writes are dropped; the new creds are written again
  await auth.saveCreds(stored)
  handle.sqlite.exec('DROP TRIGGER boom')
  await auth.saveCreds(auth.state.creds)
  assert.equal((await opened(handle, 's1', storeOf(handle))).isLinked(), false)
  assert.equal(await auth.recover(), false)
})

test('reads are served from the rows loaded at open, which follow writes', async (t) => {
  const handle = await tempDb(t)
  await insertSession(handle, 's1')
  const auth = await opened(handle, 's1')
  assert.deepEqual(await auth.state.keys.get('session', ['x']), {})
  // a row written behind the store's back is not seen: the rows were loaded (the store is the only writer)
  handle.sqlite.prepare('INSERT INTO auth_keys VALUES (?, ?, ?, ?)').run('s1', 'session', 'x', JSON.stringify({ type: 'Buffer', data: 'AQ==' }))
  assert.deepEqual(await auth.state.keys.get('session', ['x']), {})
  await auth.state.keys.set({ session: { x: Buffer.from([9]) } })
  const got = await auth.state.keys.get('session', ['x'])
  assert.deepEqual([...got.x], [9])
  // a caller mutating what it got does not change what the next reader gets
  got.x[0] = 0
  assert.deepEqual([...(await auth.state.keys.get('session', ['x'])).x], [9])
})

test('pre-keys are not held in memory: read from the database when asked for, after the writes handed over before', async (t) => {
  const handle = await tempDb(t)
  await insertSession(handle, 's1')
  // the SQLite store (its prepared statements), as the service opens it
  const store = createAuthStore(storesOf(handle).authState, () => {})
  await store.prepare('s1')
  const auth = store.open('s1')
  const pair = { public: Buffer.alloc(32, 1), private: Buffer.alloc(32, 2) }
  // not awaited: the read right after it waits for the write (as Baileys reads back the pre-keys it uploads)
  void auth.state.keys.set({ 'pre-key': { 1: pair, 2: pair }, session: { a: Buffer.from([1]) } })
  const read = await auth.state.keys.get('pre-key', ['1', '2', '3'])
  assert.deepEqual(Object.keys(read).sort(), ['1', '2'])
  assert.deepEqual(read['1'].private, pair.private)
  // a row written behind the store's back: a pre-key is seen (not cached), a session is not (cached)
  handle.sqlite.prepare('INSERT INTO auth_keys VALUES (?, ?, ?, ?)').run('s1', 'pre-key', '7', JSON.stringify(pair, BufferJSON.replacer))
  handle.sqlite.prepare('INSERT INTO auth_keys VALUES (?, ?, ?, ?)').run('s1', 'session', 'b', JSON.stringify({ type: 'Buffer', data: 'AQ==' }))
  assert.deepEqual(Object.keys(await auth.state.keys.get('pre-key', ['7'])), ['7'])
  assert.deepEqual(Object.keys(await auth.state.keys.get('session', ['a', 'b'])), ['a'])
  void auth.state.keys.set({ 'pre-key': { 1: null } })
  assert.deepEqual(Object.keys(await auth.state.keys.get('pre-key', ['1', '2'])), ['2'])
  // a new process loads every row but the pre-keys, and still reads them
  const again = createAuthStore(storesOf(handle).authState, () => {})
  await again.prepare('s1')
  assert.deepEqual(Object.keys(await again.open('s1').state.keys.get('pre-key', ['2', '7'])).sort(), ['2', '7'])
  assert.deepEqual(Object.keys(await again.open('s1').state.keys.get('session', ['a', 'b'])).sort(), ['a', 'b'])
  // after a reset nothing of the old pre-keys is read
  await auth.reset()
  assert.deepEqual(await auth.state.keys.get('pre-key', ['2', '7']), {})
})

test('reset and dispose delete every auth row; a stale socket cannot write back', async (t) => {
  const handle = await tempDb(t)
  await insertSession(handle, 's1')
  await insertSession(handle, 's2')
  const store = storeOf(handle)
  const auth = await opened(handle, 's1', store)
  const other = await opened(handle, 's2', store)
  const old = auth.state
  old.creds.me = { id: '15551230000:3@s.whatsapp.net' }
  old.creds.account = proto.ADVSignedDeviceIdentity.fromObject({ details: Buffer.from([1]) })
  await auth.saveCreds(old.creds)
  await old.keys.set({ session: { a: Buffer.from([1]) } })
  await other.state.keys.set({ session: { a: Buffer.from([1]) } })
  assert.equal(auth.isLinked(), true)

  await auth.reset()
  assert.equal(auth.isLinked(), false)
  assert.notEqual(auth.state.creds.noiseKey.public, old.creds.noiseKey.public)
  assert.equal(countKeys(handle, 's1'), 0)
  await auth.saveCreds(old.creds)
  await old.keys.set({ session: { b: Buffer.from([2]) } })
  assert.equal(handle.sqlite.prepare('SELECT count(*) FROM auth_creds WHERE session_id = ?').pluck().get('s1'), 0)
  assert.equal(countKeys(handle, 's1'), 0)
  assert.equal(countKeys(handle, 's2'), 1)

  await store.clear('s2')
  assert.equal(countKeys(handle, 's2'), 0)
})

test('100 sessions: opening, a pre-key batch each and cached reads stay fast', async (t) => {
  const handle = await tempDb(t)
  const store = storeOf(handle)
  const ids = Array.from({ length: 100 }, (_, i) => `s${i}`)
  const preKeys: Record<string, { public: Buffer, private: Buffer }> = {}
  for (let k = 1; k <= 100; k++) preKeys[k] = { public: Buffer.alloc(32, k), private: Buffer.alloc(32, k) }
  // creds exist already (generating fresh ones is Baileys' key generation, not the store's cost)
  for (const id of ids) {
    await insertSession(handle, id)
    const seeded = await opened(handle, id)
    await seeded.saveCreds(seeded.state.creds)
  }
  const started = performance.now()
  for (const id of ids) {
    const auth = await opened(handle, id, store)
    await auth.saveCreds(auth.state.creds)
    await auth.state.keys.set({ 'pre-key': preKeys })
    for (let read = 0; read < 10; read++) {
      assert.equal(Object.keys(await auth.state.keys.get('pre-key', ['1', '50', '100', '101'])).length, 3)
    }
  }
  const ms = performance.now() - started
  assert.equal(handle.sqlite.prepare('SELECT count(*) FROM auth_keys').pluck().get(), 100 * 100)
  assert.ok(ms < 5000, `100 sessions took ${ms.toFixed(0)} ms`)
})

test('a libsignal session record is stored as plain JSON and reads back equal; one holding a Buffer still revives it', async (t) => {
  const handle = await tempDb(t)
  await insertSession(handle, 's4')
  const auth = await opened(handle, 's4')
  // the shape SessionRecord.serialize() gives: base64 strings, numbers, booleans, keyed objects
  const record = {
    _sessions: {
      BQxY: {
        registrationId: 42,
        currentRatchet: { ephemeralKeyPair: { pubKey: 'BQ==', privKey: 'AQ==' }, lastRemoteEphemeralKey: 'Ag==', previousCounter: 0, rootKey: 'Aw==' },
        indexInfo: { baseKey: 'BQxY', baseKeyType: 1, closed: -1, used: 1, created: 2, remoteIdentityKey: 'BA==' },
        _chains: { '5Qx': { chainKey: { counter: 3, key: 'Bg==' }, chainType: 1, messageKeys: { 1: 'Bw==' } } }
      }
    },
    version: 'v1'
  }
  await auth.state.keys.set({ session: { 'b.0': record as never, 'c.0': { nested: Buffer.from([9, 8]) } as never } })
  const stored = handle.sqlite.prepare<[string], string>('SELECT value FROM auth_keys WHERE key_id = ?').pluck().get('b.0')
  assert.equal(stored, JSON.stringify(record))
  const reopened = await opened(handle, 's4')
  const got = await reopened.state.keys.get('session', ['b.0', 'c.0'])
  assert.deepEqual(got['b.0'], record)
  const nested = (got['c.0'] as unknown as { nested: Buffer }).nested
  assert.ok(Buffer.isBuffer(nested))
  assert.deepEqual([...nested], [9, 8])
})
