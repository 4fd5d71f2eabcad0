import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { BinaryNode } from '@whiskeysockets/baileys'
import { parseStatusReceipt } from '../../src/platform/receipt-parse.js'

// Pure checks of the stanza parser; the end-to-end receipt path (commit before ack) runs against the
// emulator in platform.test.ts and, through the service as a process, in test/durability/.

const receipt = (attrs: Record<string, string>, content?: BinaryNode[]): BinaryNode =>
  ({ tag: 'receipt', attrs: { from: 'status@broadcast', id: 'S1', t: '1700000000', ...attrs }, ...(content !== undefined ? { content } : {}) })
const list = (...ids: string[]): BinaryNode => ({ tag: 'list', attrs: {}, content: ids.map((id) => ({ tag: 'item', attrs: { id } })) })
const pairs = (node: BinaryNode): string[] => parseStatusReceipt(node).map((v) => `${v.messageId} ${v.viewerJid} ${v.type}`)

test('a read or played by PN or LID, device suffix dropped; the receipt time is kept', () => {
  assert.deepEqual(parseStatusReceipt(receipt({ participant: '15551110000:3@s.whatsapp.net', type: 'read' })),
    [{ messageId: 'S1', viewerJid: '15551110000@s.whatsapp.net', type: 'read', at: 1_700_000_000_000 }])
  assert.deepEqual(pairs(receipt({ participant: '200@lid', type: 'played' })), ['S1 200@lid played'])
  assert.deepEqual(pairs(receipt({ participant: '200@lid', type: 'played-self' })), ['S1 200@lid played'])
  assert.deepEqual(pairs(receipt({ participant: '15550000000:2@s.whatsapp.net', type: 'read-self' })), ['S1 15550000000@s.whatsapp.net read'], 'own device')
})

test('every <list> child and every <participants> viewer, each pair once', () => {
  assert.deepEqual(pairs(receipt({ participant: '200@lid', type: 'read' }, [list('S2', 'S3'), { tag: 'meta', attrs: {} }, list('S4', 'S2')])),
    ['S1 200@lid read', 'S2 200@lid read', 'S3 200@lid read', 'S4 200@lid read'])
  const many = parseStatusReceipt(receipt({ type: 'read' }, [{ tag: 'participants', attrs: {}, content: [
    { tag: 'user', attrs: { jid: '300@lid', t: '1700000005' } },
    { tag: 'user', attrs: { jid: '15552220000@s.whatsapp.net' } },
    { tag: 'user', attrs: {} }
  ] }]))
  assert.deepEqual(many.map((r) => [r.viewerJid, r.at]), [['300@lid', 1_700_000_005_000], ['15552220000@s.whatsapp.net', 1_700_000_000_000]])
})

test('deliveries come out as such (no views); sender echoes, retries, other chats and other tags are nothing', () => {
  assert.deepEqual(pairs(receipt({ participant: '200@lid' }, [list('S2')])), ['S1 200@lid delivery', 'S2 200@lid delivery'])
  assert.deepEqual(pairs(receipt({ participant: '200@lid', type: 'sender' })), [])
  assert.deepEqual(pairs(receipt({ participant: '200@lid', type: 'retry' })), [])
  assert.deepEqual(pairs({ tag: 'receipt', attrs: { from: '15551110000@s.whatsapp.net', id: 'X', type: 'read' } }), [])
  assert.deepEqual(pairs({ tag: 'message', attrs: { from: 'status@broadcast', id: 'X', type: 'read', participant: '200@lid' } }), [])
  assert.deepEqual(pairs(receipt({ type: 'read' })), [], 'no viewer named')
})

test('a receipt without a usable time gets the arrival time', () => {
  const [view] = parseStatusReceipt(receipt({ participant: '200@lid', type: 'read', t: 'x' }))
  assert.ok(Math.abs(view.at - Date.now()) < 5000)
})
