import assert from 'node:assert/strict'
import { proto } from '@whiskeysockets/baileys'
import { sql } from 'kysely'
import type { DbHandle } from '../../src/db/connection.js'
import { createAuthStore, type AuthStore } from '../../src/platform/auth-state.js'
import { authStateStore } from '../../src/db/stores/auth-state.js'
import { dialectTest, openTestDb } from '../support/db-matrix.js'
import { insertSession } from '../support/sessions.js'

// The Baileys auth store on both dialects: what one process stored, the next one (a new store) reads back
// intact; a failed batch changes neither rows nor cache; reset/dispose delete everything and a stale
// socket cannot write back. (test/platform/auth-state.test.ts covers the adapter's details on SQLite.)

async function addSession (handle: DbHandle, id: string): Promise<void> {
  await insertSession(handle, id)
}

const count = async (handle: DbHandle, table: 'auth_keys' | 'auth_creds', id: string): Promise<number> =>
  Number((await handle.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('session_id', '=', id).executeTakeFirstOrThrow()).n)

/** a store as a new process opens it: rows loaded first */
async function fresh (handle: DbHandle, id: string, errors: unknown[] = []): Promise<{ store: AuthStore, auth: ReturnType<AuthStore['open']> }> {
  const store = createAuthStore(authStateStore(handle.db), (err) => { errors.push(err) })
  await store.prepare(id)
  return { store, auth: store.open(id) }
}

dialectTest('auth state: creds and keys survive a new process with Buffers and protos intact', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  await addSession(handle, 's1')
  const { auth } = await fresh(handle, 's1')
  const { creds, keys } = auth.state
  creds.me = { id: '15551230000:3@s.whatsapp.net', lid: '100000000000001:3@lid' }
  await auth.saveCreds(creds)
  await keys.set({
    session: { 'a.0': Buffer.from([1, 2, 3]) },
    'pre-key': { 1: { public: Buffer.alloc(32, 7), private: Buffer.alloc(32, 8) } },
    'lid-mapping': { 15551230001: '100000000000002', '100000000000002_reverse': '15551230001' },
    'app-state-sync-key': { k1: proto.Message.AppStateSyncKeyData.fromObject({ keyData: Buffer.from('secret') }) }
  })
  assert.equal(await count(handle, 'auth_keys', 's1'), 5)

  // the pre-keys stay in the database until asked for (src/platform/auth-state.ts ON_DEMAND)
  const stored = await authStateStore(handle.db).load('s1', ['pre-key'])
  assert.deepEqual(stored.keys.map(([type]) => type).sort(), ['app-state-sync-key', 'lid-mapping', 'lid-mapping', 'session'])
  assert.deepEqual((await authStateStore(handle.db).readKeys('s1', 'pre-key', ['1', '2'])).map(([id]) => id), ['1'])

  const { auth: again } = await fresh(handle, 's1')
  assert.equal(again.state.creds.me?.id, '15551230000:3@s.whatsapp.net')
  assert.deepEqual(again.state.creds.noiseKey.public, creds.noiseKey.public)
  assert.ok(Buffer.isBuffer(again.state.creds.noiseKey.public))
  const sessions = await again.state.keys.get('session', ['a.0', 'missing'])
  assert.deepEqual(Object.keys(sessions), ['a.0'])
  assert.deepEqual([...sessions['a.0']], [1, 2, 3])
  assert.deepEqual((await again.state.keys.get('pre-key', ['1']))['1'].private, Buffer.alloc(32, 8))
  const app = await again.state.keys.get('app-state-sync-key', ['k1'])
  assert.ok(app.k1 instanceof proto.Message.AppStateSyncKeyData)
  assert.equal(Buffer.from(app.k1.keyData ?? []).toString(), 'secret')
  // read synchronously while a receipt stanza is being committed
  assert.equal(again.numberForLid('100000000000002'), '15551230001')
  await again.state.keys.set({ session: { 'a.0': null } })
  assert.equal(await count(handle, 'auth_keys', 's1'), 4)
})

dialectTest('auth state: a failing batch changes neither the rows nor the cache', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  await addSession(handle, 's1')
  const errors: unknown[] = []
  const { auth } = await fresh(handle, 's1', errors)
  await auth.state.keys.set({ session: { keep: Buffer.from([1]) } })
  if (dialect === 'sqlite') {
    await sql`create trigger boom before insert on auth_keys when new.key_id = 'bad' begin select raise(abort, 'boom'); end`.execute(handle.db)
  } else {
    await sql`create function boom() returns trigger language plpgsql as $$ begin
      if new.key_id = 'bad' then raise exception 'boom'; end if; return new; end $$`.execute(handle.db)
    await sql`create trigger boom before insert on auth_keys for each row execute function boom()`.execute(handle.db)
  }
  await assert.rejects(async () => { await auth.state.keys.set({ session: { good: Buffer.from([2]), bad: Buffer.from([3]), keep: null } }) }, /boom/)
  assert.equal(await count(handle, 'auth_keys', 's1'), 1)
  assert.deepEqual(Object.keys(await auth.state.keys.get('session', ['good', 'keep'])), ['keep'])
  await sql`drop trigger boom ${sql.raw(dialect === 'postgres' ? 'on auth_keys' : '')}`.execute(handle.db)
  await auth.state.keys.set({ session: { good: Buffer.from([2]), keep: null } })
  assert.equal(await count(handle, 'auth_keys', 's1'), 1)
  assert.deepEqual(Object.keys(await auth.state.keys.get('session', ['good', 'keep'])), ['good'])
  assert.equal(errors.length, 1, 'the failed write was reported')
})

dialectTest('auth state: writesPending tells the send gate whether what was handed over is committed', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  await addSession(handle, 's1')
  const { auth } = await fresh(handle, 's1')
  assert.equal(auth.writesPending(), undefined, 'nothing handed over')
  const creds = auth.state.creds
  const saved = auth.saveCreds(creds)
  const keys = auth.state.keys.set({ session: { a: Buffer.from([1]) } })
  const both = auth.writesPending()
  assert.ok(both !== undefined)
  assert.equal(await both, true)
  await Promise.all([saved, keys])
  assert.equal(auth.writesPending(), undefined, 'nothing left once they settled')
  assert.equal(await count(handle, 'auth_creds', 's1'), 1)

  // a failed write makes the outcome false, for every write queued behind it too, until the queue empties
  if (dialect === 'sqlite') await sql`create trigger refuse before update on auth_creds begin select raise(abort, 'refuse'); end`.execute(handle.db)
  else await sql`alter table auth_creds add constraint refuse check (false) not valid`.execute(handle.db)
  void auth.saveCreds(creds)
  void auth.state.keys.set({ session: { b: Buffer.from([2]) } })
  assert.equal(await auth.writesPending(), false)
  if (dialect === 'sqlite') await sql`drop trigger refuse`.execute(handle.db)
  else await sql`alter table auth_creds drop constraint refuse`.execute(handle.db)
  await waitUntilIdle(auth)
  void auth.saveCreds(creds)
  assert.equal(await auth.writesPending(), true, 'a new queue starts clean')
})

async function waitUntilIdle (auth: ReturnType<AuthStore['open']>): Promise<void> {
  for (let i = 0; i < 2000 && auth.writesPending() !== undefined; i++) await new Promise((resolve) => setTimeout(resolve, 5))
  assert.equal(auth.writesPending(), undefined)
}

dialectTest('auth state: reset and dispose delete every row; a stale socket cannot write back', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  await addSession(handle, 's1')
  await addSession(handle, 's2')
  const store = createAuthStore(authStateStore(handle.db), () => {})
  await store.prepare('s1')
  await store.prepare('s2')
  const auth = store.open('s1')
  const other = store.open('s2')
  const old = auth.state
  old.creds.me = { id: '15551230000:3@s.whatsapp.net' }
  old.creds.account = proto.ADVSignedDeviceIdentity.fromObject({ details: Buffer.from([1]) })
  await auth.saveCreds(old.creds)
  await old.keys.set({ session: { a: Buffer.from([1]) } })
  await other.state.keys.set({ session: { a: Buffer.from([1]) } })
  assert.equal(auth.isLinked(), true)

  await auth.reset()
  assert.equal(auth.isLinked(), false)
  assert.equal(await count(handle, 'auth_keys', 's1'), 0)
  await auth.saveCreds(old.creds)
  await old.keys.set({ session: { b: Buffer.from([2]) } })
  assert.equal(await count(handle, 'auth_creds', 's1'), 0)
  assert.equal(await count(handle, 'auth_keys', 's1'), 0)
  assert.deepEqual(await auth.state.keys.get('session', ['a', 'b']), {}, 'the new epoch sees nothing of the old one')
  assert.equal(await count(handle, 'auth_keys', 's2'), 1)
  await store.clear('s2')
  assert.equal(await count(handle, 'auth_keys', 's2'), 0)
})

dialectTest('auth state: writes of one session commit in order (the last creds win)', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  await addSession(handle, 's1')
  const { auth } = await fresh(handle, 's1')
  const creds = auth.state.creds
  const writes: Array<Promise<void>> = []
  for (let i = 0; i < 20; i++) {
    ;(creds as { registrationId: number }).registrationId = i
    writes.push(auth.saveCreds(creds))
    writes.push(Promise.resolve(auth.state.keys.set({ 'pre-key': { [i]: { public: Buffer.alloc(32, i), private: Buffer.alloc(32, i) } } })))
  }
  await Promise.all(writes)
  const { auth: again } = await fresh(handle, 's1')
  assert.equal(again.state.creds.registrationId, 19)
  assert.equal(await count(handle, 'auth_keys', 's1'), 20)
})
