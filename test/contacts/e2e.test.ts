import assert from 'node:assert/strict'
import { openStores } from '../../src/db/stores/index.js'
import { build, waitFor, type TestApp } from '../helper.js'
import { startStack } from '../stack.js'
import { dialectEnv, dialectTest } from '../support/db-matrix.js'

// Issue 24, the platform half, end to end: the emulated phone's saved contacts and status privacy reach the
// service through real Baileys (app-state sync: the key share, server_sync, rc14's contacts.upsert and
// settings.update; the status privacy query), on both backends. Set on the phone before linking (they arrive
// at the link), changed after it (they follow without linking again), changed while the service is down
// (they follow at its next start), kept across a restart, and forgotten when the phone logs the device out.

const OWN = '4915100002400'
const ALICE = '4915100002401'
const BOB = '4915100002402'
const CAROL = '4915100002403'
const DAVE = '4915100002404'
const ERIN = '4915100002405'
const SID = 'phone'

interface Contact { number: string | null, lid: string | null, name: string | null }
interface Privacy { mode: string | null, numbers: string[], updatedAt: string | null }

async function contactsOf (app: Pick<TestApp, 'api'>): Promise<Contact[]> {
  const out: Contact[] = []
  let cursor: string | null = null
  // every page (2 a page, so the paging is part of it), bounded
  for (let i = 0; i < 20; i++) {
    const res = await app.api({ method: 'GET', url: `/api/sessions/${SID}/contacts?limit=2${cursor === null ? '' : `&cursor=${cursor}`}` })
    assert.equal(res.statusCode, 200, res.body)
    const page = res.json<{ data: { contacts: Contact[], nextCursor: string | null } }>().data
    out.push(...page.contacts)
    cursor = page.nextCursor
    if (cursor === null) return out.sort((a, b) => String(a.number).localeCompare(String(b.number)))
  }
  throw new Error('more than 20 pages')
}

async function privacyOf (app: Pick<TestApp, 'api'>): Promise<Privacy> {
  const res = await app.api({ method: 'GET', url: `/api/sessions/${SID}/status-privacy` })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: Privacy }>().data
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

dialectTest("the phone's contacts and status privacy reach the service through app-state sync, follow changes and survive a restart", async (t, dialect) => {
  // the waits below poll the routes: the per-address rate limit must not be what they find
  const env = { ...await dialectEnv(dialect), RATE_LIMIT_MAX: '1000000' }
  const s = await startStack(t, env)
  const emu = s.emu
  const put = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${emu.controlUrl}/accounts/${OWN}/${path}`, { method: 'PUT', body: JSON.stringify(body) })
    const json = await res.json() as Record<string, unknown>
    assert.equal(res.status, 200, JSON.stringify(json))
    return json
  }
  emu.addContact({ number: ALICE, devices: 2 })
  const lidOf = (n: string): string => `${emu.getContact(n).lid}@lid`

  // set on the phone before the link: the new device gets the key at its first login, and the service syncs
  emu.createAccount(OWN)
  await put('saved-contacts', { contacts: [{ number: ALICE, name: 'Alice Liddell' }, { number: BOB, name: 'Bob' }, { number: `+${CAROL}`, name: 'Carol' }] })
  await put('status-privacy', { mode: 'denylist', numbers: [BOB] })
  // as POST /api/sessions makes it (on PostgreSQL the lease with the row: no orphan for the cluster to start again)
  await s.app.sessions.create({ sessionId: SID, sessionName: SID, authMethod: 'qrcode', phoneNumber: null })
  await emu.scan(OWN, await waitFor(() => s.app.platform.snapshot(SID)?.qrCode, 15_000, 'the QR code'))
  await waitFor(() => s.app.platform.snapshot(SID)?.connected, 30_000, 'the session to open')

  const atLink = [
    { number: ALICE, lid: lidOf(ALICE), name: 'Alice Liddell' },
    { number: BOB, lid: lidOf(BOB), name: 'Bob' },
    { number: CAROL, lid: lidOf(CAROL), name: 'Carol' }
  ]
  await waitFor(async () => same(await contactsOf(s), atLink), 20_000, 'the contacts synced at the link')
  const linked = await waitFor(async () => { const p = await privacyOf(s); return p.mode === 'denylist' ? p : null }, 20_000, 'the status privacy read at the link')
  assert.deepEqual(linked.numbers, [BOB])
  assert.ok(linked.updatedAt !== null && Math.abs(Date.parse(linked.updatedAt) - Date.now()) < 60_000)
  // what the audiences read
  assert.deepEqual((await s.app.contacts.savedNumbers(SID)).map((c) => c.name).sort(), ['Alice Liddell', 'Bob', 'Carol'])
  assert.deepEqual(await s.app.contacts.statusPrivacy(SID), { mode: 'denylist', numbers: [BOB] })
  // search through the route
  const found = await s.api({ method: 'GET', url: `/api/sessions/${SID}/contacts?search=LIDDELL` })
  assert.deepEqual(found.json<{ data: { contacts: Contact[] } }>().data.contacts, [atLink[0]])

  // changed on the phone after the link: a rename, two removals, an addition; no new link
  await put('saved-contacts', { contacts: [{ number: BOB, name: 'Robert' }, { number: DAVE, name: 'Dave' }] })
  const afterChange = [{ number: BOB, lid: lidOf(BOB), name: 'Robert' }, { number: DAVE, lid: lidOf(DAVE), name: 'Dave' }]
  await waitFor(async () => same(await contactsOf(s), afterChange), 20_000, 'the change on the phone')
  await put('status-privacy', { mode: 'allowlist', numbers: [DAVE, ERIN] })
  await waitFor(async () => { const p = await privacyOf(s); return p.mode === 'allowlist' && same(p.numbers, [DAVE, ERIN]) }, 20_000, 'the privacy change')
  assert.equal(emu.getAccount(OWN).linkedDevices.length, 1, 'still the one linked device')

  // the service stops: what it stored is in the database, as the phone last said
  const dir = s.dir
  await s.app.close()
  const store = (await openStores({ url: s.config.databaseUrl, file: s.config.databaseFile })).handle
  const rows = await store.db.selectFrom('phone_contacts').select(['number', 'lid', 'name']).where('session_id', '=', SID).orderBy('number').execute()
  assert.deepEqual(rows, afterChange)
  const privacyRow = await store.db.selectFrom('phone_status_privacy').select(['mode', 'numbers']).where('session_id', '=', SID).executeTakeFirstOrThrow()
  assert.deepEqual([privacyRow.mode, JSON.parse(privacyRow.numbers)], ['allowlist', [DAVE, ERIN]])
  // a stale row the phone never had: the full sync at the next start removes it
  await store.db.insertInto('phone_contacts').values({ session_id: SID, jid: '4915100002499@s.whatsapp.net', number: '4915100002499', lid: null, name: 'Stale', updated_at: Date.now() }).execute()
  await store.close()
  // meanwhile the phone changes again
  await put('saved-contacts', { contacts: [{ number: DAVE, name: 'David' }, { number: ERIN, name: 'Erin' }] })
  await put('status-privacy', { mode: 'contacts' })
  const restartEnv = { WA_WEBSOCKET_URL: emu.wsUrl, WA_TEST_TRUST_ROOT: emu.rootPublicKey, ...env }
  const again = dialect === 'sqlite' ? await build(t, restartEnv, { keepDir: dir }) : await build(t, restartEnv)

  await waitFor(() => again.app.platform.snapshot(SID)?.connected, 30_000, 'the session to reconnect')
  const afterRestart = [{ number: DAVE, lid: lidOf(DAVE), name: 'David' }, { number: ERIN, lid: lidOf(ERIN), name: 'Erin' }]
  await waitFor(async () => same(await contactsOf(again), afterRestart), 20_000, 'the contacts synced in full at the start (the stale row gone)')
  await waitFor(async () => { const p = await privacyOf(again); return p.mode === 'contacts' && p.numbers.length === 0 }, 20_000, 'the privacy read at the reconnect')

  // and it keeps following the phone after the restart
  await put('saved-contacts', { contacts: [{ number: ERIN, name: 'Erin' }] })
  await waitFor(async () => same(await contactsOf(again), [afterRestart[1]]), 20_000, 'a removal after the restart')
  assert.equal(emu.getAccount(OWN).linkedDevices.length, 1, 'never linked again')

  // the phone removes the device: what it shared is forgotten
  emu.fault(OWN, 'logout')
  await waitFor(async () => (await contactsOf(again)).length === 0 && (await privacyOf(again)).mode === null, 20_000, 'the phone\'s data forgotten at logout')
})
