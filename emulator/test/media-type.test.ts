import assert from 'node:assert/strict'
import { test } from 'node:test'
import { proto, type BinaryNode } from '@whiskeysockets/baileys'
import { expectedMediaType, readStanza } from '../src/status-rules.js'

// The skmsg's `mediatype` as WA Web sets it per content (whatsapp-rust wacore/src/send/classify.rs
// media_type_from_message), which the emulator records per stanza and checks against the decrypted post.

test('readStanza records the skmsg mediatype; expectedMediaType gives WA Web\'s for each content', () => {
  const stanza = (mediatype?: string): BinaryNode => ({
    tag: 'message',
    attrs: { to: 'status@broadcast', id: 'X', type: 'media' },
    content: [
      { tag: 'participants', attrs: {}, content: [{ tag: 'to', attrs: { jid: '1@lid' } }] },
      { tag: 'enc', attrs: { v: '2', type: 'skmsg', ...(mediatype !== undefined ? { mediatype } : {}) }, content: Buffer.alloc(1) }
    ]
  })
  assert.equal(readStanza(stanza('ptt')).mediatype, 'ptt')
  assert.equal(readStanza(stanza()).mediatype, undefined)

  const cases: Array<[string, proto.IMessage, string | undefined]> = [
    ['a voice note', { audioMessage: { ptt: true, mimetype: 'audio/ogg; codecs=opus', seconds: 3 } }, 'ptt'],
    ['other audio', { audioMessage: { ptt: false, mimetype: 'audio/mpeg' } }, 'audio'],
    ['audio without ptt', { audioMessage: { mimetype: 'audio/mp4' } }, 'audio'],
    ['an image', { imageMessage: { mimetype: 'image/jpeg' } }, 'image'],
    ['a video', { videoMessage: { mimetype: 'video/mp4' } }, 'video'],
    ['a GIF', { videoMessage: { gifPlayback: true } }, 'gif'],
    ['a text', { extendedTextMessage: { text: 'hi' } }, undefined],
    ['a revoke', { protocolMessage: { type: proto.Message.ProtocolMessage.Type.REVOKE } }, undefined]
  ]
  for (const [what, content, expected] of cases) assert.equal(expectedMediaType(proto.Message.fromObject(content)), expected, what)
})
