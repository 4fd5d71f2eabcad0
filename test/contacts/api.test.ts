import assert from 'node:assert/strict'
import { build } from '../helper.js'
import { dialectEnv, dialectTest } from '../support/db-matrix.js'
import { insertSession } from '../support/sessions.js'
import { dbOf } from '../support/db.js'

// The phone's contacts and status privacy as the service keeps them (what the platform hands the sink) and
// as GET …/contacts and …/status-privacy show them, on both backends. Through real Baileys and the
// emulator: contacts-e2e.test.ts.

const SID = 'phone'

interface Page { contacts: Array<{ number: string | null, lid: string | null, name: string | null }>, nextCursor: string | null }

dialectTest('contacts: the sink keeps them current, the route pages and searches them, the audiences read them', async (t, dialect) => {
  const { app, api } = await build(t, await dialectEnv(dialect))
  const now = Date.now()
  for (const id of [SID, 'other']) {
    await insertSession(app, id, { createdAt: now })
  }
  const page = async (query = ''): Promise<Page> => {
    const res = await api({ method: 'GET', url: `/api/sessions/${SID}/contacts${query}` })
    assert.equal(res.statusCode, 200, res.body)
    return res.json<{ data: Page }>().data
  }
  assert.deepEqual(await page(), { contacts: [], nextCursor: null })
  assert.deepEqual(await app.contacts.savedNumbers(SID), [])

  const { sink } = app.contacts
  const pn = (n: string, name: string, lid: string | null = null) => ({ jid: `${n}@s.whatsapp.net`, number: n, lid, name })
  await sink.contactsReplaced(SID, [
    pn('4915300000011', 'Ann Smith', '900000000011@lid'),
    pn('4915300000012', 'Ben 50%_off'),
    { jid: '900000000013@lid', number: null, lid: '900000000013@lid', name: 'Cy' },
    pn('4915300000014', 'Dee', '900000000014@lid')
  ])
  await sink.contactsReplaced('other', [pn('4915300000099', 'Not mine')])
  const all = await page()
  assert.deepEqual(all.contacts, [
    { number: '4915300000011', lid: '900000000011@lid', name: 'Ann Smith' },
    { number: '4915300000012', lid: null, name: 'Ben 50%_off' },
    { number: null, lid: '900000000013@lid', name: 'Cy' },
    { number: '4915300000014', lid: '900000000014@lid', name: 'Dee' }
  ])
  assert.equal(all.nextCursor, null)

  // pages of 3 then 1, following nextCursor
  const first = await page('?limit=3')
  assert.equal(first.contacts.length, 3)
  assert.ok(first.nextCursor !== null)
  const second = await page(`?limit=3&cursor=${first.nextCursor}`)
  assert.deepEqual(second, { contacts: [all.contacts[3]], nextCursor: null })

  // search: name in any case, number as a substring; LIKE's wildcards are taken literally
  assert.deepEqual((await page('?search=ann%20SM')).contacts.map((c) => c.name), ['Ann Smith'])
  assert.deepEqual((await page('?search=0000001')).contacts.map((c) => c.name), ['Ann Smith', 'Ben 50%_off', 'Dee'])
  assert.deepEqual((await page(`?search=${encodeURIComponent('%_')}`)).contacts.map((c) => c.name), ['Ben 50%_off'])
  assert.deepEqual((await page('?search=_')).contacts.map((c) => c.name), ['Ben 50%_off'])
  assert.deepEqual((await page('?search=zzz')).contacts, [])

  // a change: one renamed and given a LID, one removed, one added; the order of the others is kept
  await sink.contactsChanged(SID, { saved: [pn('4915300000012', 'Ben', '900000000012@lid'), pn('4915300000015', 'Eve')], removed: ['4915300000011@s.whatsapp.net'] })
  assert.deepEqual((await page()).contacts.map((c) => `${c.name}:${c.lid}`), ['Ben:900000000012@lid', 'Cy:900000000013@lid', 'Dee:900000000014@lid', 'Eve:null'])
  // a full sync again: whatever it does not list goes
  await sink.contactsReplaced(SID, [pn('4915300000014', 'Dee'), pn('4915300000016', 'Fay')])
  assert.deepEqual(await app.contacts.savedNumbers(SID), [
    { number: '4915300000014', lid: null, name: 'Dee' },
    { number: '4915300000016', lid: null, name: 'Fay' }
  ])
  assert.deepEqual((await app.contacts.savedNumbers('other')).map((c) => c.number), ['4915300000099'])

  // bad queries name the field; an unknown session is 404
  for (const [query, error] of [['?limit=0', /querystring\.limit/], ['?limit=201', /querystring\.limit/], ['?cursor=abc', /querystring\.cursor/], ['?sort=name', /querystring\.sort is not an allowed field/]] as const) {
    const res = await api({ method: 'GET', url: `/api/sessions/${SID}/contacts${query}` })
    assert.equal(res.statusCode, 400, query)
    assert.match(res.json<{ error: string }>().error, error)
  }
  for (const url of ['/api/sessions/nobody/contacts', '/api/sessions/nobody/status-privacy']) {
    const res = await api({ method: 'GET', url })
    assert.deepEqual([res.statusCode, res.json<{ error: string }>().error], [404, 'Session not found'])
  }

  // status privacy: not known, then as the phone said, then changed
  const privacy = async (): Promise<{ mode: string | null, numbers: string[], updatedAt: string | null }> =>
    (await api({ method: 'GET', url: `/api/sessions/${SID}/status-privacy` })).json<{ data: { mode: string | null, numbers: string[], updatedAt: string | null } }>().data
  assert.deepEqual(await privacy(), { mode: null, numbers: [], updatedAt: null })
  assert.equal(await app.contacts.statusPrivacy(SID), null)
  await sink.statusPrivacy(SID, { mode: 'denylist', numbers: ['4915300000014', '900000000013@lid'] })
  const denied = await privacy()
  assert.deepEqual([denied.mode, denied.numbers], ['denylist', ['4915300000014', '900000000013@lid']])
  assert.ok(denied.updatedAt !== null && Date.parse(denied.updatedAt) >= now)
  await sink.statusPrivacy(SID, { mode: 'contacts', numbers: [] })
  assert.deepEqual(await app.contacts.statusPrivacy(SID), { mode: 'contacts', numbers: [] })

  // a logout forgets what the phone shared; the session's rows go with it
  await sink.forget(SID)
  assert.deepEqual([await app.contacts.savedNumbers(SID), await app.contacts.statusPrivacy(SID)], [[], null])
  await sink.statusPrivacy('other', { mode: 'allowlist', numbers: ['4915300000099'] })
  // (the rows go with the session by cascade)
  await dbOf(app).db.deleteFrom('sessions').where('id', '=', 'other').execute()
  const left = await dbOf(app).db.selectFrom('phone_contacts').select('jid').execute()
  const leftPrivacy = await dbOf(app).db.selectFrom('phone_status_privacy').select('session_id').execute()
  assert.deepEqual([left, leftPrivacy], [[], []])
})

dialectTest('contacts: a read key of the session reads them; a key of another session gets 404', async (t, dialect) => {
  const { app, api } = await build(t, await dialectEnv(dialect))
  for (const id of [SID, 'other']) {
    await insertSession(app, id)
  }
  await app.contacts.sink.contactsReplaced(SID, [{ jid: '4915300000011@s.whatsapp.net', number: '4915300000011', lid: null, name: 'Ann' }])
  const key = async (sessions: string[], scopes: string[]): Promise<string> =>
    (await api({ method: 'POST', url: '/api/keys', payload: { name: 'k', sessions, scopes } })).json<{ data: { key: string } }>().data.key
  const reader = await key([SID], ['read'])
  const stranger = await key(['other'], ['read', 'send', 'manage'])
  const get = async (k: string, path: string) => await app.inject({ method: 'GET', url: `/api/sessions/${SID}/${path}`, headers: { 'x-api-key': k } })
  for (const path of ['contacts', 'status-privacy']) {
    assert.equal((await get(reader, path)).statusCode, 200, path)
    assert.equal((await get(stranger, path)).statusCode, 404, path)
  }
  assert.equal((await get(reader, 'contacts')).json<{ data: Page }>().data.contacts[0].name, 'Ann')
})
