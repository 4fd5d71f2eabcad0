import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { BinaryNode } from '@whiskeysockets/baileys'
import { notDelivered, parseStatusReceipt } from '../../src/platform/receipt-parse.js'

// Pure checks of the stanza parser; the end-to-end receipt path (commit before ack) runs against the
// emulator in platform.test.ts and, through the service as a process, in test/durability/.

const receipt = (attrs: Record<string, string>, content?: BinaryNode[]): BinaryNode =>
  ({ tag: 'receipt', attrs: { from: 'status@broadcast', id: 'S1', t: '1700000000', ...attrs }, ...(content !== undefined ? { content } : {}) })
const list = (...ids: string[]): BinaryNode => ({ tag: 'list', attrs: {}, content: ids.map((id) => ({ tag: 'item', attrs: { id } })) })
const pairs = (node: BinaryNode): string[] => parseStatusReceipt(node).map((v) => `${v.messageId} ${v.viewerJid} ${v.type}`)

test('a read or played by PN or LID, device suffix dropped; the receipt time is kept', () => {
  assert.deepEqual(parseStatusReceipt(receipt({ participant: '15551110000:3@s.whatsapp.net', type: 'read' })),
    [{ messageId: 'S1', viewerJid: '15551110000@s.whatsapp.net', type: 'read', at: 1_700_000_000_000, viewerPn: null }])
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

// the grouped form (tulir/whatsmeow #1270): no stanza type, the status id on <participants>, a type per <user>
const grouped = (participants: Record<string, string>, users: Array<Record<string, string>>, attrs: Record<string, string> = {}): BinaryNode =>
  receipt({ class: 'status', id: 'SAGR0011AA', ...attrs }, [{ tag: 'participants', attrs: participants, content: users.map((u) => ({ tag: 'user', attrs: u })) }])

test('grouped: the status is message_id (not the stanza id), each viewer has its own type and time', () => {
  const parsed = parseStatusReceipt(grouped({ message_id: '3EB0AA' }, [
    { jid: '300@lid', t: '1700000005', type: 'delivery' },
    { jid: '301@lid', t: '1700000006', type: 'read' },
    { jid: '302:4@lid', type: 'played' },
    { jid: '303@lid', t: '1700000007', type: 'read-self' }
  ]))
  assert.deepEqual(parsed, [
    { messageId: '3EB0AA', viewerJid: '300@lid', type: 'delivery', at: 1_700_000_005_000, viewerPn: null },
    { messageId: '3EB0AA', viewerJid: '301@lid', type: 'read', at: 1_700_000_006_000, viewerPn: null },
    { messageId: '3EB0AA', viewerJid: '302@lid', type: 'played', at: 1_700_000_000_000, viewerPn: null },
    { messageId: '3EB0AA', viewerJid: '303@lid', type: 'read', at: 1_700_000_007_000, viewerPn: null }
  ])
  assert.ok(parsed.every((p) => p.messageId !== 'SAGR0011AA'), 'the receipt id names no status')
})

test('grouped: participant_pn is the viewer number beside the LID; key when there is no message_id', () => {
  assert.deepEqual(parseStatusReceipt(grouped({ key: '3EB0BB' }, [
    { jid: '400@lid', t: '1700000010', type: 'read', participant_pn: '15554440000:2@s.whatsapp.net' },
    { jid: '401@lid', t: '1700000011', type: 'read', participant_pn: 'not-a-number@lid' }
  ])).map((p) => [p.messageId, p.viewerJid, p.viewerPn]), [['3EB0BB', '400@lid', '15554440000'], ['3EB0BB', '401@lid', null]])
  // message_id wins over key; a user without a type takes the stanza's (none: a delivery)
  assert.deepEqual(pairs(grouped({ message_id: '3EB0CC', key: '3EB0DD' }, [{ jid: '402@lid' }])), ['3EB0CC 402@lid delivery'])
  assert.deepEqual(pairs(grouped({ message_id: '3EB0CC' }, [{ jid: '402@lid' }], { type: 'read' })), ['3EB0CC 402@lid read'])
})

test('grouped: a viewer both delivered and read is both; repeats once; unknown types and users without jid skipped', () => {
  assert.deepEqual(pairs(grouped({ message_id: '3EB0EE' }, [
    { jid: '500@lid', type: 'delivery' },
    { jid: '500@lid', type: 'read' },
    { jid: '500:1@lid', type: 'read' },
    { jid: '501@lid', type: 'sender' },
    { type: 'read' }
  ])), ['3EB0EE 500@lid delivery', '3EB0EE 500@lid read'])
  // several <participants>, each its own status
  const two = receipt({ class: 'status', id: 'SAGR2' }, [
    { tag: 'participants', attrs: { message_id: 'A1' }, content: [{ tag: 'user', attrs: { jid: '600@lid', type: 'read' } }] },
    { tag: 'participants', attrs: { message_id: 'A2' }, content: [{ tag: 'user', attrs: { jid: '600@lid', type: 'played' } }] }
  ])
  assert.deepEqual(pairs(two), ['A1 600@lid read', 'A2 600@lid played'])
})

const featureIncapable: BinaryNode = { tag: 'error', attrs: { reason: 'lid', type: 'feature-incapable' } }

test('a delivery with <error reason="lid" type="feature-incapable"/> is no delivery (whatsapp-rust PR #708); reads keep theirs', () => {
  const simple = receipt({ participant: '700@lid' }, [featureIncapable])
  assert.deepEqual(pairs(simple), [])
  assert.equal(notDelivered(simple), true)
  assert.deepEqual(pairs(receipt({ participant: '700@lid', type: 'delivery' }, [featureIncapable])), [])
  // grouped: the stanza's error downgrades each delivery user, a read stays a read
  const mixed = grouped({ message_id: '3EB0FF' }, [{ jid: '701@lid', type: 'delivery' }, { jid: '702@lid', type: 'read' }])
  const withError = { ...mixed, content: [...(mixed.content as BinaryNode[]), featureIncapable] }
  assert.deepEqual(pairs(withError), ['3EB0FF 702@lid read'])
  assert.equal(notDelivered(withError), true)
  // not a delivery receipt, another error, or none: nothing downgraded
  const read = receipt({ participant: '700@lid', type: 'read' }, [featureIncapable])
  assert.deepEqual([pairs(read), notDelivered(read)], [['S1 700@lid read'], false])
  assert.equal(notDelivered(receipt({ participant: '700@lid', type: 'retry' }, [featureIncapable])), false)
  const other = receipt({ participant: '700@lid' }, [{ tag: 'error', attrs: { reason: 'lid', type: 'other' } }])
  assert.deepEqual([pairs(other), notDelivered(other)], [['S1 700@lid delivery'], false])
  assert.equal(notDelivered(receipt({ participant: '700@lid' })), false)
})

test('a simple receipt reads its stanza-level participant_pn as the viewer number (whatsapp-rust PR #724)', () => {
  assert.deepEqual(parseStatusReceipt(receipt({ participant: '800:2@lid', participant_pn: '15554440001:2@s.whatsapp.net', type: 'read' }, [list('S2')]))
    .map((p) => [p.messageId, p.viewerJid, p.viewerPn]), [['S1', '800@lid', '15554440001'], ['S2', '800@lid', '15554440001']])
  assert.equal(parseStatusReceipt(receipt({ participant: '800@lid', participant_pn: 'nobody@lid', type: 'read' }))[0].viewerPn, null)
  assert.equal(parseStatusReceipt(receipt({ participant: '800@lid', type: 'read' }))[0].viewerPn, null)
})
