import assert from 'node:assert/strict'
import { build } from '../helper.js'
import { dialectEnv, dialectTest } from '../support/db-matrix.js'
import { insertSession } from '../support/sessions.js'

// The account's answers to its contacts' statuses (migration 021) on both backends: one like per status (a new
// one replaces it, taking it back removes it), replies in order, and all of them gone with their status (the
// 24-hour cleanup) and with their session. Through real Baileys: test/contacts/like-reply-e2e.test.ts.

const SID = 'answers'

dialectTest("the account's likes and replies: kept per status, gone with the status and the session", async (t, dialect) => {
  const { app } = await build(t, await dialectEnv(dialect))
  const now = Date.now()
  await insertSession(app, SID, { createdAt: now })
  const { contactStatuses, contactStatusAnswers: answers } = app.stores
  const base = { fromJid: '900000000011@lid', fromLid: '900000000011@lid', fromNumber: null, type: 'text', caption: null, mimetype: null, size: null, mediaRef: null, error: null }
  const a = (await contactStatuses.record(SID, { ...base, messageId: 'A', text: 'a', postedAt: now - 30 * 3_600_000 }, now))!
  const b = (await contactStatuses.record(SID, { ...base, messageId: 'B', text: 'b', postedAt: now }, now))!

  await answers.setLike(a.seq, { emoji: '💚', messageId: 'L1', likedAt: now })
  await answers.setLike(a.seq, { emoji: '😂', messageId: 'L2', likedAt: now + 1 })
  await answers.setLike(b.seq, { emoji: '💚', messageId: 'L3', likedAt: now })
  await answers.clearLike(b.seq)
  await answers.addReply(a.seq, { messageId: 'R1', text: 'first', sentAt: now })
  await answers.addReply(a.seq, { messageId: 'R2', text: 'second', sentAt: now + 1 })
  await answers.addReply(b.seq, { messageId: 'R3', text: 'to b', sentAt: now })
  const found = await answers.of([a.seq, b.seq])
  assert.deepEqual(found.get(a.seq), {
    like: { emoji: '😂', messageId: 'L2', likedAt: now + 1 },
    replies: [{ messageId: 'R1', text: 'first', sentAt: now }, { messageId: 'R2', text: 'second', sentAt: now + 1 }]
  })
  assert.deepEqual(found.get(b.seq), { like: null, replies: [{ messageId: 'R3', text: 'to b', sentAt: now }] })
  assert.deepEqual(await answers.of([]), new Map())

  // the cleanup removes status A (older than 24 hours): its answers go with it
  await contactStatuses.expire(now - 24 * 3_600_000)
  const after = await answers.of([a.seq, b.seq])
  assert.equal(after.get(a.seq), undefined)
  assert.equal(after.get(b.seq)?.replies.length, 1)
  // the session goes: everything with it
  await app.stores.sessions.remove(SID)
  assert.equal((await answers.of([b.seq])).size, 0)
})
