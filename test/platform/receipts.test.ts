import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { BinaryNode } from '@whiskeysockets/baileys'
import { splitStatusReceipt } from '../../src/platform/receipts.js'

// Pure checks of the coverage rule; the end-to-end receipt paths run against the emulator in platform.test.ts.

const me = { id: '15550000000:7@s.whatsapp.net' }
const receipt = (attrs: Record<string, string>, content?: BinaryNode[]): BinaryNode =>
  ({ tag: 'receipt', attrs: { from: 'status@broadcast', id: 'S1', t: '1700000000', ...attrs }, ...(content !== undefined ? { content } : {}) })
const list = (...ids: string[]): BinaryNode => ({ tag: 'list', attrs: {}, content: ids.map((id) => ({ tag: 'item', attrs: { id } })) })

test('a plain read or a <list> first child is left to Baileys', () => {
  assert.deepEqual(splitStatusReceipt(receipt({ participant: '15551110000@s.whatsapp.net', type: 'read' }), me), { extra: [], corrections: [] })
  assert.deepEqual(splitStatusReceipt(receipt({ participant: '200@lid', type: 'read' }, [list('S2', 'S3')]), me).extra, [])
})

test('played is corrected, sender echoes are dropped', () => {
  const played = splitStatusReceipt(receipt({ participant: '15551110000@s.whatsapp.net', type: 'played' }), me)
  assert.deepEqual(played.extra, [])
  assert.deepEqual(played.corrections.map((c) => c.kind), ['played'])
  const sender = splitStatusReceipt(receipt({ participant: '200@lid', type: 'sender' }), me)
  assert.deepEqual(sender, { extra: [], corrections: [{ key: 'S1\n200@lid', kind: 'ignore' }] })
})

test('what rc14 drops comes out as extra: own-number views, later <list>s, <participants>, played-self', () => {
  const own = splitStatusReceipt(receipt({ participant: '15550000000:2@s.whatsapp.net', type: 'read' }), me)
  assert.deepEqual(own.extra, [{ messageId: 'S1', viewerJid: '15550000000@s.whatsapp.net', type: 'read', at: 1_700_000_000_000 }])

  const later = splitStatusReceipt(receipt({ participant: '200@lid', type: 'read' }, [{ tag: 'meta', attrs: {} }, list('S2')]), me)
  assert.deepEqual(later.extra.map((r) => r.messageId), ['S2'], 'S1 itself is reported by Baileys')

  const many = splitStatusReceipt(receipt({ type: 'read' }, [{ tag: 'participants', attrs: {}, content: [
    { tag: 'user', attrs: { jid: '300@lid', t: '1700000005' } },
    { tag: 'user', attrs: { jid: '15552220000@s.whatsapp.net' } }
  ] }]), me)
  assert.deepEqual(many.extra.map((r) => [r.viewerJid, r.at]), [['300@lid', 1_700_000_005_000], ['15552220000@s.whatsapp.net', 1_700_000_000_000]])

  const selfPlayed = splitStatusReceipt(receipt({ participant: '200@lid', type: 'played-self' }), me)
  assert.deepEqual(selfPlayed.extra.map((r) => r.type), ['played'])
})

test('non-status receipts and unknown types are ignored', () => {
  assert.deepEqual(splitStatusReceipt({ tag: 'receipt', attrs: { from: '15551110000@s.whatsapp.net', id: 'X', type: 'read' } }, me), { extra: [], corrections: [] })
  assert.deepEqual(splitStatusReceipt(receipt({ participant: '200@lid', type: 'retry' }), me), { extra: [], corrections: [] })
})
