import assert from 'node:assert/strict'
import { storesOf } from '../../src/db/stores/index.js'
import { dialectTest, openTestDb } from '../support/db-matrix.js'

// Reactions and replies (migration 005) on both dialects: the latest reaction wins whatever the order, a
// redelivery changes nothing, replies are kept once, and a LID's rows move to its number (merged).

dialectTest('reactions and replies: latest wins, redelivery no-op, LID rows get their number', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const store = storesOf(handle).viewers
  const now = Date.now()
  await storesOf(handle).sessions.insert({ id: 's1', name: 's1', authMethod: 'qrcode', phoneNumber: null, createdAt: now })
  const statusId = await storesOf(handle).statuses.insert({
    sessionId: 's1', type: 'text', content: 'x', caption: '', messageId: 'S1', state: 'sent', createdAt: now, contactCount: 2,
    targetNumbers: '', mediaFile: null, backgroundColor: null, font: null, error: null
  })
  const A = { number: '1555', jid: '1555@s.whatsapp.net' }
  const lid = { number: null, jid: '88@lid' }
  assert.ok(await store.recordReaction('s1', { ...A, statusMessageId: 'S1', messageId: 'R2', emoji: '🔥', at: now + 2000 }))
  assert.equal(await store.recordReaction('s1', { ...A, statusMessageId: 'S1', messageId: 'R1', emoji: '👍', at: now + 1000 }), undefined, 'an older one loses')
  assert.equal(await store.recordReaction('s1', { ...A, statusMessageId: 'S1', messageId: 'R2', emoji: '🔥', at: now + 2000 }), undefined, 'a redelivery')
  assert.equal(await store.recordReaction('s1', { ...A, statusMessageId: 'nope', messageId: 'R3', emoji: '🔥', at: now }), undefined)
  // the LID (later: 1555) reacted later than the number did: after mapping its reaction is the one kept
  assert.ok(await store.recordReaction('s1', { ...lid, statusMessageId: 'S1', messageId: 'R4', emoji: '😂', at: now + 3000 }))
  assert.ok(await store.recordReply('s1', { ...lid, statusMessageId: 'S1', messageId: 'P1', text: 'hi', at: now + 4000 }))
  assert.equal(await store.recordReply('s1', { ...lid, statusMessageId: 'S1', messageId: 'P1', text: 'hi', at: now + 4000 }), undefined)
  const reply = await store.recordReply('s1', { ...A, statusMessageId: 'S1', messageId: 'P2', text: 'yo', at: now + 5000 })
  assert.equal(typeof reply?.receivedAt, 'number')

  assert.deepEqual(await store.unmappedInteractionLids('s1', 10), ['88@lid'])
  assert.deepEqual([...await store.mapInteractionLids('s1', [{ lid: '88@lid', number: '1555' }])], [statusId])
  assert.deepEqual(await store.unmappedInteractionLids('s1', 10), [])
  assert.deepEqual((await store.reactions(statusId)).map((r) => [r.reactor, r.emoji, r.reactedAt]), [['1555', '😂', now + 3000]])
  assert.deepEqual((await store.replies(statusId)).map((r) => [r.replier, r.number, r.text]), [['1555', '1555', 'hi'], ['1555', '1555', 'yo']])
  assert.deepEqual(await storesOf(handle).system.interactionTotals(), { reactions: 1, replies: 2 })
})
