import assert from 'node:assert/strict'
import { test } from 'node:test'
import { checkAudience, createAudienceResolver, type PhoneContacts } from '../../plugins/audiences/resolve.js'
import { recipientOf } from '../../plugins/audiences/numbers.js'
import { audienceStore } from '../../src/db/stores/audiences.js'
import { openTestDb } from '../support/db-matrix.js'
import { insertSession } from '../support/sessions.js'

// How an audience resolves from what the phone sent (its saved contacts and status privacy, given here as
// the contacts plugin would hand them over) to recipients and the post's status_setting. Through real
// Baileys and the emulator: send-e2e.test.ts and contacts-e2e.test.ts.

const OWN = '4915300000001'
const OWN_LID = '900000000001@lid'
const own = { number: OWN, lid: OWN_LID }

type Saved = Awaited<ReturnType<PhoneContacts['savedNumbers']>>
type Privacy = Awaited<ReturnType<PhoneContacts['statusPrivacy']>>

async function resolverWith (t: Parameters<typeof openTestDb>[0], saved: Saved, privacy: Privacy) {
  const db = await openTestDb(t, 'sqlite')
  const phone: PhoneContacts = { savedNumbers: async () => saved, statusPrivacy: async () => privacy }
  return { db, resolver: createAudienceResolver({ audiences: audienceStore(db.db), contacts: () => phone }) }
}

const SAVED: Saved = [
  { number: '4915300000011', lid: '900000000011@lid', name: 'Ann' },
  { number: '4915300000012', lid: null, name: 'Ben' },
  // known to the phone only by its LID: a recipient by LID
  { number: null, lid: '900000000013', name: 'Cy' },
  { number: '+4915300000014', lid: '900000000014:3@lid', name: 'Dee' },
  // the own account, a repeat and an entry with neither form are left out
  { number: OWN, lid: OWN_LID, name: 'me' },
  { number: '4915300000011', lid: null, name: 'Ann again' },
  { number: null, lid: '900000000011@lid', name: 'Ann by her LID' },
  { number: 'n/a', lid: null, name: 'nobody' }
]

test('contacts: every saved contact (LID-only ones by LID), the own one left out; except by number or LID makes it a denylist', async (t) => {
  const { resolver } = await resolverWith(t, SAVED, null)
  const all = await resolver.resolve('s', checkAudience({ type: 'contacts' }), own)
  assert.deepEqual(all.recipients, ['4915300000011', '4915300000012', '900000000013@lid', '4915300000014'])
  assert.deepEqual(all.snapshot, { type: 'contacts', audienceId: null, name: null, except: [], mode: null, statusSetting: 'contacts', recipients: all.recipients })

  // a contact with both is left out by either; a LID-only one by its LID
  const less = await resolver.resolve('s', checkAudience({ type: 'contacts', except: ['900000000011@lid', '900000000013@lid', ' 4915300000014 '] }), own)
  assert.deepEqual(less.recipients, ['4915300000012'])
  assert.equal(less.snapshot.statusSetting, 'denylist')
  assert.deepEqual(less.snapshot.except, ['900000000011@lid', '900000000013@lid', '4915300000014'])

  await assert.rejects(resolver.resolve('s', checkAudience({ type: 'contacts', except: ['4915300000011', '4915300000012', '900000000013@lid', '4915300000014'] }), own),
    (err: Error & { statusCode?: number }) => err.statusCode === 400 && /body\.audience\.except leaves nobody/.test(err.message))
})

test('phone: follows the status privacy mode and its list', async (t) => {
  const contacts = await resolverWith(t, SAVED, { mode: 'contacts', numbers: [] })
  const c = await contacts.resolver.resolve('s', checkAudience({ type: 'phone' }), own)
  assert.deepEqual([c.recipients.length, c.snapshot.statusSetting, c.snapshot.mode, c.snapshot.except], [4, 'contacts', 'contacts', null])

  const deny = await resolverWith(t, SAVED, { mode: 'denylist', numbers: ['4915300000011@s.whatsapp.net', '900000000013@lid'] })
  const d = await deny.resolver.resolve('s', checkAudience({ type: 'phone' }), own)
  assert.deepEqual(d.recipients, ['4915300000012', '4915300000014'])
  assert.deepEqual([d.snapshot.statusSetting, d.snapshot.mode, d.snapshot.except], ['denylist', 'denylist', ['4915300000011', '900000000013@lid']])

  // allow list: exactly its list (saved or not), the own number left out
  const allow = await resolverWith(t, [], { mode: 'allowlist', numbers: ['4915300000099', OWN, '900000000077@lid', '4915300000099'] })
  const a = await allow.resolver.resolve('s', checkAudience({ type: 'phone' }), own)
  assert.deepEqual(a.recipients, ['4915300000099', '900000000077@lid'])
  assert.equal(a.snapshot.statusSetting, 'allowlist')

  const nobody = await resolverWith(t, SAVED, { mode: 'allowlist', numbers: [] })
  await assert.rejects(nobody.resolver.resolve('s', checkAudience({ type: 'phone' }), own),
    (err: Error & { statusCode?: number }) => err.statusCode === 409 && /leaves nobody to share with/.test(err.message))
  const unknown = await resolverWith(t, SAVED, null)
  await assert.rejects(unknown.resolver.resolve('s', checkAudience({ type: 'phone' }), own),
    (err: Error & { statusCode?: number }) => err.statusCode === 409 && /status privacy is not known/.test(err.message))
  // contacts mode needs the contacts
  const noContacts = await resolverWith(t, [], { mode: 'contacts', numbers: [] })
  await assert.rejects(noContacts.resolver.resolve('s', checkAudience({ type: 'phone' }), own),
    (err: Error & { statusCode?: number }) => err.statusCode === 409 && /no saved contacts/.test(err.message))
})

test('list and saved: exactly the numbers, allowlist; a saved audience that holds only the own number is refused', async (t) => {
  const { db, resolver } = await resolverWith(t, [], null)
  const list = await resolver.resolve('s', checkAudience({ type: 'list', numbers: ['4915300000021', OWN, '4915300000021', '4915300000022'] }), own)
  assert.deepEqual(list.recipients, ['4915300000021', '4915300000022'])
  assert.deepEqual(list.snapshot, { type: 'list', audienceId: null, name: null, except: null, mode: null, statusSetting: 'allowlist', recipients: list.recipients })

  await insertSession(db, 's', { createdAt: 1 })
  await db.db.insertInto('audiences').values({ id: 'aud_a', session_id: 's', name: 'A', numbers: `4915300000031,${OWN}`, number_count: 2, created_at: 1, updated_at: 1 }).execute()
  await db.db.insertInto('audiences').values({ id: 'aud_me', session_id: 's', name: 'Me', numbers: OWN, number_count: 1, created_at: 1, updated_at: 1 }).execute()
  const saved = await resolver.resolve('s', checkAudience({ type: 'saved', audienceId: 'aud_a' }), own)
  assert.deepEqual(saved.recipients, ['4915300000031'])
  assert.deepEqual([saved.snapshot.audienceId, saved.snapshot.name, saved.snapshot.statusSetting], ['aud_a', 'A', 'allowlist'])
  await assert.rejects(resolver.resolve('s', checkAudience({ type: 'saved', audienceId: 'aud_me' }), own),
    (err: Error & { statusCode?: number }) => err.statusCode === 400 && /holds nobody but the own number/.test(err.message))
  await assert.rejects(resolver.resolve('other', checkAudience({ type: 'saved', audienceId: 'aud_a' }), own),
    (err: Error & { statusCode?: number }) => err.statusCode === 400 && /no saved audience aud_a in this session/.test(err.message))
})

test('contact ids from the phone: numbers, JIDs and LIDs as recipients', () => {
  assert.equal(recipientOf('4915300000011'), '4915300000011')
  assert.equal(recipientOf('+4915300000011'), '4915300000011')
  assert.equal(recipientOf('4915300000011@s.whatsapp.net'), '4915300000011')
  assert.equal(recipientOf('4915300000011:2@s.whatsapp.net'), '4915300000011')
  assert.equal(recipientOf('900000000011@lid'), '900000000011@lid')
  assert.equal(recipientOf('123'), null)
  assert.equal(recipientOf('group@g.us'), null)
  assert.equal(recipientOf(null), null)
})
