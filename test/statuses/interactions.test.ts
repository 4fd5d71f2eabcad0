import assert from 'node:assert/strict'
import { test } from 'node:test'
import { proto } from '@whiskeysockets/baileys'
import { parseStatusInteraction } from '../../src/platform/interactions.js'
import type { StatusInteraction } from '../../src/platform/types.js'
import { createInteractionIngest } from '../../plugins/interaction-ingest/index.js'
import { harness, type Harness } from './harness.js'
import { sqliteOf } from '../helper.js'
import { dbOf } from '../support/db.js'

// The interaction sink over the real database (the platform faked): what a reaction or a reply does to
// the stored lists, the counts and the events, whatever order and however often the platform delivers.

const A = '15551240001'
const B = '15551240002'
const LID = '777000111@lid'

const reaction = (statusMessageId: string, from: string | null, emoji: string, at: number, messageId = `R${at}${from ?? 'lid'}`): StatusInteraction =>
  ({ kind: 'reaction', statusMessageId, messageId, fromJid: from === null ? LID : `${from}@s.whatsapp.net`, fromNumber: from, emoji, at })
const reply = (statusMessageId: string, from: string | null, text: string, at: number, messageId: string): StatusInteraction =>
  ({ kind: 'reply', statusMessageId, messageId, fromJid: from === null ? LID : `${from}@s.whatsapp.net`, fromNumber: from, text, at })

async function setup (
  t: Parameters<typeof harness>[0], env: Record<string, string> = {}
): Promise<{ h: Harness, ingest: ReturnType<typeof createInteractionIngest>, status: { statusId: string, platformMessageId: string } }> {
  const h = await harness(t, env)
  await h.addSession('s1')
  const ingest = createInteractionIngest({ stores: h.app.stores, events: h.app.domainEvents, log: h.app.log })
  const status = await h.app.statuses.send('s1', { type: 'text', content: 'hello', targetNumbers: `${A},${B}` })
  return { h, ingest, status }
}

test('reactions: one per contact, the latest wins whatever the arrival order, a removal stays removed, redelivery is a no-op', async (t) => {
  const { h, ingest, status } = await setup(t)
  const id = status.platformMessageId
  const t0 = Date.now() - 10_000
  await ingest.sink.commit('s1', reaction(id, A, '👍', t0))
  await ingest.sink.commit('s1', reaction(id, A, '👍', t0)) // the same message again
  await ingest.sink.commit('s1', reaction(id, B, '❤️', t0 + 1000))
  await ingest.sink.commit('s1', reaction(id, A, '😂', t0 + 2000))
  await ingest.sink.commit('s1', reaction(id, A, '😮', t0 + 500)) // an older one arriving late
  await ingest.sink.commit('s1', reaction(id, B, '', t0 + 3000)) // B takes it back
  await ingest.sink.commit('s1', reaction(id, B, '❤️', t0 + 1000)) // B's old reaction delivered again
  await ingest.sink.commit('s1', reaction('UNKNOWN', A, '🔥', t0)) // another chat's status: nothing stored
  const list = await h.app.statuses.reactions('s1', status.statusId)
  assert.deepEqual(list.map((r) => [r.number, r.emoji, r.reactedAt]), [[A, '😂', new Date(t0 + 2000).toISOString()]])
  const events = h.of('status-reaction')
  assert.deepEqual(events.map((e) => [e.reaction.number, e.reaction.emoji, e.removed ?? false]),
    [[A, '👍', false], [B, '❤️', false], [A, '😂', false], [B, '', true]])
  assert.ok(events.every((e) => e.sessionId === 's1' && e.statusId === status.statusId))
  assert.deepEqual(ingest.stats(), { reactions: 4, replies: 0, ignored: 4 })
  const [listed] = await h.app.statuses.list('s1')
  assert.deepEqual([listed.reactionCount, listed.replyCount], [1, 0])
})

test('replies: every one kept in order, each message once; unknown session or status is a 404', async (t) => {
  const { h, ingest, status } = await setup(t)
  const id = status.platformMessageId
  const at = Date.now()
  await ingest.sink.commit('s1', reply(id, A, 'first', at, 'M1'))
  await ingest.sink.commit('s1', reply(id, B, 'second', at, 'M2')) // same second: arrival order
  await ingest.sink.commit('s1', reply(id, A, 'first', at, 'M1'))
  await ingest.sink.commit('s1', reply(id, A, 'third', at + 1000, 'M3'))
  assert.deepEqual((await h.app.statuses.replies('s1', status.statusId)).map((r) => [r.number, r.text, r.messageId]),
    [[A, 'first', 'M1'], [B, 'second', 'M2'], [A, 'third', 'M3']])
  assert.equal(h.of('status-reply').length, 3)
  assert.equal((await h.app.statuses.list('s1'))[0].replyCount, 3)
  await assert.rejects(h.app.statuses.replies('nope', status.statusId), /Session not found/)
  await assert.rejects(h.app.statuses.reactions('s1', '999'), /Status not found/)
})

test('a LID without a number is kept under the LID and moves to the number (merged: the later reaction stays)', async (t) => {
  const { h, ingest, status } = await setup(t)
  const id = status.platformMessageId
  const t0 = Date.now() - 5000
  await ingest.sink.commit('s1', reaction(id, A, '👍', t0 + 1000))
  await ingest.sink.commit('s1', reaction(id, null, '🔥', t0)) // A again, by LID, earlier
  await ingest.sink.commit('s1', reply(id, null, 'by lid', t0, 'L1'))
  assert.deepEqual((await h.app.statuses.reactions('s1', status.statusId)).map((r) => [r.jid, r.number]).sort(),
    [[`${A}@s.whatsapp.net`, A], [LID, null]])
  assert.deepEqual(await ingest.sink.unmappedLids('s1', 10), [LID])
  await ingest.sink.lidsMapped('s1', [{ lid: LID, number: A }])
  assert.deepEqual((await h.app.statuses.reactions('s1', status.statusId)).map((r) => [r.jid, r.number, r.emoji]), [[`${A}@s.whatsapp.net`, A, '👍']])
  assert.deepEqual((await h.app.statuses.replies('s1', status.statusId)).map((r) => [r.jid, r.number]), [[`${A}@s.whatsapp.net`, A]])
  assert.deepEqual(await ingest.sink.unmappedLids('s1', 10), [])
})

test('deleting or expiring a status removes its reactions and replies; a closed ingest refuses', async (t) => {
  const ttlMs = 60_000
  const { h, ingest, status } = await setup(t, { STATUS_TTL_HOURS: String(ttlMs / 3_600_000) })
  const other = await h.app.statuses.send('s1', { type: 'text', content: 'second' })
  for (const s of [status, other]) {
    await ingest.sink.commit('s1', reaction(s.platformMessageId, A, '👍', Date.now()))
    await ingest.sink.commit('s1', reply(s.platformMessageId, B, 'hi', Date.now(), `M${s.statusId}`))
  }
  const count = (table: 'status_reactions' | 'status_replies'): number =>
    sqliteOf(dbOf(h.app)).prepare(`select count(*) from ${table}`).pluck().get() as number
  await h.app.statuses.remove('s1', status.statusId)
  assert.deepEqual([count('status_reactions'), count('status_replies')], [1, 1])
  await dbOf(h.app).db.updateTable('statuses').set({ created_at: Date.now() - ttlMs - 1000 }).where('id', '=', Number(other.statusId)).execute()
  await h.app.statuses.cleanup()
  assert.deepEqual([count('status_reactions'), count('status_replies')], [0, 0])
  ingest.stop()
  await assert.rejects(Promise.resolve().then(async () => { await ingest.sink.commit('s1', reaction('X', A, '👍', 1)) }), /closed/)
})

test('parseStatusInteraction: only reactions keyed to a status and messages quoting one', () => {
  const stanza = { id: 'MSG1', from: `${A}:2@s.whatsapp.net`, t: '1700000000' }
  const key = { remoteJid: 'status@broadcast', id: 'S1', fromMe: false, participant: '15550000001@s.whatsapp.net' }
  assert.deepEqual(parseStatusInteraction({ reactionMessage: { key, text: '❤️', senderTimestampMs: 1700000000123 } }, stanza),
    { messageId: 'MSG1', fromJid: `${A}@s.whatsapp.net`, kind: 'reaction', statusMessageId: 'S1', emoji: '❤️', at: 1700000000123 })
  assert.equal(parseStatusInteraction({ reactionMessage: { key: { ...key, remoteJid: `${A}@s.whatsapp.net` }, text: '❤️' } }, stanza), null, 'a reaction in a chat')
  const quoted = { stanzaId: 'S1', remoteJid: 'status@broadcast', participant: key.participant, quotedMessage: { conversation: 'x' } }
  assert.deepEqual(parseStatusInteraction(proto.Message.fromObject({ extendedTextMessage: { text: 'nice', contextInfo: quoted } }), stanza),
    { messageId: 'MSG1', fromJid: `${A}@s.whatsapp.net`, kind: 'reply', text: 'nice', statusMessageId: 'S1', at: 1700000000000 })
  assert.equal(parseStatusInteraction({ imageMessage: { caption: 'me too', contextInfo: quoted } }, stanza)?.kind, 'reply')
  assert.equal(parseStatusInteraction({ extendedTextMessage: { text: 'chat', contextInfo: { ...quoted, remoteJid: undefined } } }, stanza), null, 'a quote in a chat')
  assert.equal(parseStatusInteraction({ conversation: 'hello' }, stanza), null, 'an ordinary message')
})
