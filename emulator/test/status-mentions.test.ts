import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { BinaryNode } from '@whiskeysockets/baileys'
import { Account } from '../src/accounts.js'
import { readStanza, stanzaRuleBroken } from '../src/status-rules.js'
import { MAX_MENTIONED_USERS, statusMentionOf } from '../src/status-mentions.js'

// The `mentioned-users` rule (WA Web's publish schema: 1 to 5 `<mentioned_users><to jid/>`, LID users for a
// migrated account) on hand-built stanzas, and the mention message as the inbox reads it.

const post = (mentioned: string[] | undefined): BinaryNode => ({
  tag: 'message',
  attrs: { to: 'status@broadcast', id: '3EB0AA', type: 'text' },
  content: [
    { tag: 'participants', attrs: {}, content: [{ tag: 'to', attrs: { jid: '100000000000200@lid' } }] },
    {
      tag: 'meta',
      attrs: { status_setting: 'allowlist' },
      ...(mentioned === undefined ? {} : { content: [{ tag: 'mentioned_users', attrs: {}, content: mentioned.map((jid) => ({ tag: 'to', attrs: { jid } })) }] })
    }
  ]
})
const lids = (n: number): string[] => Array.from({ length: n }, (_, i) => `10000000000030${i}@lid`)

describe('mentioned-users', () => {
  const migrated = new Account('15550000100', '100000000000100')
  const legacy = new Account('15550000101', '100000000000101', true)

  it('takes 1 to 5 LID users, or none at all', () => {
    assert.equal(stanzaRuleBroken(readStanza(post(undefined)), migrated), undefined)
    for (const n of [1, MAX_MENTIONED_USERS]) {
      const shape = readStanza(post(lids(n)))
      assert.deepEqual(shape.mentioned, lids(n))
      assert.equal(stanzaRuleBroken(shape, migrated), undefined, `${n} mentioned`)
    }
  })

  it('refuses an empty list, a sixth user, a device and (from a migrated account) a phone number', () => {
    assert.equal(stanzaRuleBroken(readStanza(post([])), migrated)?.rule, 'mentioned-users')
    assert.equal(stanzaRuleBroken(readStanza(post(lids(6))), migrated)?.rule, 'mentioned-users')
    assert.equal(stanzaRuleBroken(readStanza(post(['100000000000300:2@lid'])), migrated)?.rule, 'mentioned-users')
    assert.equal(stanzaRuleBroken(readStanza(post(['15550000300@s.whatsapp.net'])), migrated)?.rule, 'mentioned-users')
    assert.equal(stanzaRuleBroken(readStanza(post(['15550000300@s.whatsapp.net'])), legacy), undefined)
  })

  it('reads a status mention message, and nothing else as one', () => {
    assert.deepEqual(statusMentionOf({ statusMentionMessage: { message: { protocolMessage: { key: { remoteJid: 'status@broadcast', fromMe: true, id: '3EB0AA' }, type: 25 } } } }),
      { statusId: '3EB0AA', remoteJid: 'status@broadcast', fromMe: true, type: 25 })
    assert.equal(statusMentionOf({ conversation: 'hi' }), undefined)
  })
})
