import assert from 'node:assert/strict'
import { test } from 'node:test'
import { privacyFromAction, privacyFromLists, toPhoneContact } from '../../src/platform/session/phone.js'

// How rc14's app-state events and the status privacy answer become what the service stores
// (src/platform/session/phone.ts). Through real Baileys and the emulator: e2e.test.ts.

const known = (lidUser: string): string | null => lidUser === '900000000011' ? '4915300000011' : null

test('contacts.upsert entries: a saved contact, a removal (no name), a LID-only contact, what is not a contact', () => {
  assert.deepEqual(toPhoneContact({ id: '4915300000011@s.whatsapp.net', name: ' Ann ', lid: '900000000011@lid', phoneNumber: '4915300000011@s.whatsapp.net' }),
    { jid: '4915300000011@s.whatsapp.net', number: '4915300000011', lid: '900000000011@lid', name: 'Ann' })
  // a device suffix on the LID is dropped
  assert.equal(toPhoneContact({ id: '4915300000012@s.whatsapp.net', name: 'Ben', lid: '900000000012:3@lid' })?.lid, '900000000012@lid')
  // rc14's upsert for a REMOVE: no name, no lid
  assert.deepEqual(toPhoneContact({ id: '4915300000013@s.whatsapp.net', phoneNumber: '4915300000013@s.whatsapp.net' }),
    { jid: '4915300000013@s.whatsapp.net', number: '4915300000013', lid: null, name: null })
  assert.equal(toPhoneContact({ id: '4915300000013@s.whatsapp.net', name: '  ' })?.name, null)
  // a lid_contact action: keyed by the LID, no number
  assert.deepEqual(toPhoneContact({ id: '900000000014@lid', name: 'Cy', lid: '900000000014@lid' }),
    { jid: '900000000014@lid', number: null, lid: '900000000014@lid', name: 'Cy' })
  assert.equal(toPhoneContact({ id: '120363000000000000@g.us', name: 'a group' }), null)
  assert.equal(toPhoneContact({ id: '', name: 'nobody' }), null)
})

test('the status privacy answer: whatsmeow\'s list types and WA Web\'s, the default list first, LIDs mapped when known', () => {
  const list = (type: string, jids: string[], isDefault = true) => ({ type, isDefault, jids })
  assert.deepEqual(privacyFromLists([], known), { mode: 'contacts', numbers: [] })
  assert.deepEqual(privacyFromLists([list('contacts', ['4915300000011@s.whatsapp.net'])], known), { mode: 'contacts', numbers: [] })
  for (const [type, mode] of [['whitelist', 'allowlist'], ['allowlist', 'allowlist'], ['blacklist', 'denylist'], ['denylist', 'denylist']]) {
    assert.deepEqual(privacyFromLists([list(type, ['4915300000012@s.whatsapp.net', '900000000011@lid', '900000000019:2@lid', '4915300000012:1@s.whatsapp.net', 'status@broadcast'])], known),
      { mode, numbers: ['4915300000012', '4915300000011', '900000000019@lid'] }, type)
  }
  assert.equal(privacyFromLists([list('close_friends', [])], known), null)
})

test('a statusPrivacy action: the mode as rc14 gives it (a number) or by name', () => {
  const jids = ['4915300000012@s.whatsapp.net', '900000000011@lid']
  assert.deepEqual(privacyFromAction({ mode: 1, userJid: jids }, known), { mode: 'denylist', numbers: ['4915300000012', '4915300000011'] })
  assert.deepEqual(privacyFromAction({ mode: 'ALLOW_LIST', userJid: jids }, known), { mode: 'allowlist', numbers: ['4915300000012', '4915300000011'] })
  assert.deepEqual(privacyFromAction({ mode: 2, userJid: jids }, known), { mode: 'contacts', numbers: [] })
  // an absent mode is the enum's default, ALLOW_LIST (proto3 leaves 0 out)
  assert.deepEqual(privacyFromAction({ userJid: [] }, known), { mode: 'allowlist', numbers: [] })
  assert.equal(privacyFromAction({ mode: 7 }, known), null)
})
