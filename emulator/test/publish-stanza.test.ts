import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { BinaryNode } from '@whiskeysockets/baileys'
import type { Account } from '../src/accounts.js'
import { ackClassOf, misaddressedStatus } from '../src/publish-stanza.js'
import { readStanza, stanzaRuleBroken } from '../src/status-rules.js'

// WA Web's newer publish stanza (src/publish-stanza.ts): acked class="status", only to status@broadcast, and its
// audience LIDs only for every account (WAWebEncryptAndSendStatusMsg: compactMap(statusList, toUserLid)).

const stanza = (tag: 'message' | 'status', jid: string, to = 'status@broadcast'): BinaryNode => ({
  tag,
  attrs: { to, id: 'X', type: 'text' },
  content: [
    { tag: 'participants', attrs: {}, content: [{ tag: 'to', attrs: { jid } }] },
    { tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: Buffer.alloc(1) }
  ]
})
const legacy = { legacy: true } as unknown as Account
const migrated = { legacy: false } as unknown as Account

test('a <status> publish stanza is acked class="status", a <message> class="message"', () => {
  assert.equal(ackClassOf(stanza('status', '1@lid')), 'status')
  assert.equal(ackClassOf(stanza('message', '1@lid')), 'message')
})

test('a <status> publish stanza goes only to status@broadcast', () => {
  assert.equal(misaddressedStatus(stanza('status', '1@lid')), undefined)
  assert.match(misaddressedStatus(stanza('status', '1@lid', '491234@s.whatsapp.net')) ?? '', /only status@broadcast/)
  assert.equal(misaddressedStatus(stanza('message', '1@lid', '491234@s.whatsapp.net')), undefined, 'a <message> elsewhere is a chat message')
})

test('phone-number participants: refused in a <status> from any account, in a <message> only from an LID-migrated one', () => {
  const pn = '491234@s.whatsapp.net'
  assert.equal(stanzaRuleBroken(readStanza(stanza('status', pn)), legacy)?.rule, 'pn-participants')
  assert.equal(stanzaRuleBroken(readStanza(stanza('status', pn)), migrated)?.rule, 'pn-participants')
  assert.equal(stanzaRuleBroken(readStanza(stanza('message', pn)), legacy), undefined)
  assert.equal(stanzaRuleBroken(readStanza(stanza('message', pn)), migrated)?.rule, 'pn-participants')
  assert.equal(stanzaRuleBroken(readStanza(stanza('status', '1@lid')), legacy), undefined)
})
