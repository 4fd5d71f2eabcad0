import assert from 'node:assert/strict'
import { test } from 'node:test'
import { proto } from '@whiskeysockets/baileys'
import { statusMediaType, statusStanzaType } from '../../src/platform/baileys/status-shape.js'
import { identityChangedUser } from '../../src/platform/baileys/status-key-memory.js'
import { revokeMessage } from '../../src/platform/session/status-message.js'

// The content-dependent attributes of an LID status stanza (WA Web's typeAttributeFromProtobuf, as
// whatsapp-rust wacore/src/send/classify.rs mirrors it); the stanza itself runs through real Baileys
// against the emulator in status-lid.test.ts.

const m = (o: Record<string, unknown>): proto.IMessage => proto.Message.fromObject(o)

test('a text status is type text without mediatype; a link preview is media/url', () => {
  assert.equal(statusStanzaType(m({ extendedTextMessage: { text: 'hi', backgroundArgb: 0xff336699 } })), 'text')
  assert.equal(statusMediaType(m({ extendedTextMessage: { text: 'hi' } })), undefined)
  const link = m({ extendedTextMessage: { text: 'see https://example.org', matchedText: 'https://example.org' } })
  assert.equal(statusStanzaType(link), 'media')
  assert.equal(statusMediaType(link), 'url')
})

test('image and video statuses are media with their mediatype; a gif video is gif', () => {
  assert.deepEqual([statusStanzaType(m({ imageMessage: { caption: 'x' } })), statusMediaType(m({ imageMessage: {} }))], ['media', 'image'])
  assert.deepEqual([statusStanzaType(m({ videoMessage: {} })), statusMediaType(m({ videoMessage: {} }))], ['media', 'video'])
  assert.equal(statusMediaType(m({ videoMessage: { gifPlayback: true } })), 'gif')
})

test('a revoke is type text without mediatype', () => {
  const revoke = revokeMessage('3EB0ABCDEF')
  assert.equal(statusStanzaType(revoke), 'text')
  assert.equal(statusMediaType(revoke), undefined)
})

test('an identity change names the contact; the own account and notifications without <identity> do not count', () => {
  const note = (from: string, child = 'identity') => ({ tag: 'notification', attrs: { from, type: 'encrypt' }, content: [{ tag: child, attrs: {} }] })
  assert.equal(identityChangedUser(note('100000000000001@lid'), '100000000000009:3@lid', '15550001:3@s.whatsapp.net'), '100000000000001@lid')
  assert.equal(identityChangedUser(note('100000000000009@lid'), '100000000000009:3@lid', '15550001:3@s.whatsapp.net'), null)
  assert.equal(identityChangedUser(note('15550001@s.whatsapp.net'), '100000000000009:3@lid', '15550001:3@s.whatsapp.net'), null)
  assert.equal(identityChangedUser(note('100000000000001@lid', 'count'), '100000000000009:3@lid', '15550001:3@s.whatsapp.net'), null)
})
