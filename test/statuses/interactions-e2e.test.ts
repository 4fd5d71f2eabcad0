import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { startEmulator, testCertPaths } from '@status-tracker/emulator'
import { connectSocket, emulatorApi, HttpError, linkSessions, serviceApi } from '../support/clients.js'
import { tempDir } from '../support/processes.js'
import { spawnService, type ServiceProc } from '../support/service.js'
import { waitFor } from '../support/wait.js'
import { SQLite as Database } from '../../src/db/sqlite/driver.js'
import type { EventPayloads } from '../../schemas/events.js'
import { EventRecorder } from '../events.js'

// Issue 15 end to end: the service as a real process, real Baileys, the emulator's contacts reacting to
// and replying to a status (through their Signal sessions, by number and by LID). Each reaction and reply
// shows in REST and in socket.io events, survives a restart, and goes when the status is deleted.

const OWN = '15558800001'
const SID = 'answers'

interface Reaction { jid: string, number: string | null, emoji: string, reactedAt: string }
interface Reply { jid: string, number: string | null, text: string, repliedAt: string, messageId: string }

test('reactions and replies to a status through real Baileys: REST, events, restart, delete', { timeout: 150_000 }, async (t) => {
  const emu = await startEmulator({ tls: testCertPaths() })
  t.after(async () => { await emu.stop() })
  const dir = tempDir('st-answers-')
  t.after(() => { dir.rm() })
  let svc: ServiceProc
  const start = async (): Promise<void> => {
    svc = await spawnService({ dir: dir.path, emulator: emu, t })
  }
  await start()
  const api = () => serviceApi(svc.base)
  await linkSessions(api(), emulatorApi(emu.controlUrl), [{ sessionId: SID, number: OWN }])
  const [alice, bob, carol, erin] = ['15558800011', '15558800012', '15558800013', '15558800014'].map((number) => emu.addContact({ number }))

  const socket = await connectSocket(svc!.base)
  t.after(() => { socket.close() })
  const events = new EventRecorder<EventPayloads>()
  socket.onAny((event: keyof EventPayloads, payload: unknown) => { events.record(event, payload) })

  const sent = await api().post<{ statusId: string, platformMessageId: string }>(`/sessions/${SID}/send-status`,
    { type: 'text', content: 'what do you think?', targetNumbers: [alice, bob, carol].map((c) => c.number).join(',') })
  const statusId = sent.statusId
  const msgId = sent.platformMessageId
  await emu.waitForStatus((s) => s.id === msgId && s.decrypted)
  const reactions = async () => await api().get<Reaction[]>(`/sessions/${SID}/status-reactions/${statusId}`)
  const replies = async () => await api().get<Reply[]>(`/sessions/${SID}/status-replies/${statusId}`)
  const reactionEvent = async (from: string, emoji: string) => await events.latest('status-reaction',
    (p) => p.statusId === statusId && p.reaction.number === from && p.reaction.emoji === emoji, 15_000, `status-reaction ${emoji} from ${from}`)

  await t.test('a like by number, one by LID, a change of emoji, a removal', async () => {
    await emu.react(msgId, { from: alice.number, emoji: '👍' })
    assert.equal((await reactionEvent(alice.number, '👍')).sessionId, SID)
    const byLid = await emu.react(msgId, { from: bob.number, emoji: '❤️', via: 'lid' })
    assert.equal(byLid.deliveredTo, 1)
    // the LID is mapped: the service sent the status to bob's number and learned his LID then
    const lidEvent = await reactionEvent(bob.number, '❤️')
    assert.equal(lidEvent.reaction.jid, `${bob.number}@s.whatsapp.net`)
    await emu.react(msgId, { from: alice.number, emoji: '😂' })
    await reactionEvent(alice.number, '😂')
    await emu.react(msgId, { from: carol.number, emoji: '🔥' })
    await reactionEvent(carol.number, '🔥')
    await emu.react(msgId, { from: carol.number, emoji: '' })
    const removed = await reactionEvent(carol.number, '')
    assert.equal(removed.removed, true)

    const list = await reactions()
    assert.deepEqual(list.map((r) => [r.number, r.jid, r.emoji]), [
      [bob.number, `${bob.number}@s.whatsapp.net`, '❤️'],
      [alice.number, `${alice.number}@s.whatsapp.net`, '😂']
    ])
    assert.ok(list.every((r) => Math.abs(Date.parse(r.reactedAt) - Date.now()) < 60_000))
  })

  await t.test('two replies, one by LID', async () => {
    const sentAt = performance.now()
    const first = await emu.reply(msgId, { from: alice.number, text: 'love it' })
    await events.latest('status-reply', (p) => p.reply.messageId === first.messageId, 15_000)
    t.diagnostic(`a reply reached socket.io ${(performance.now() - sentAt).toFixed(0)} ms after the contact sent it (encrypt, decrypt, commit, event)`)
    const second = await emu.reply(msgId, { from: bob.number, text: 'where is this?', via: 'lid' })
    const ev = await events.latest('status-reply', (p) => p.statusId === statusId && p.reply.messageId === second.messageId, 15_000)
    assert.deepEqual([ev.reply.number, ev.reply.text], [bob.number, 'where is this?'])
    assert.deepEqual((await replies()).map((r) => [r.number, r.text, r.messageId]), [
      [alice.number, 'love it', first.messageId],
      [bob.number, 'where is this?', second.messageId]
    ])
  })

  await t.test('a LID with no known number is kept (number null) and gets its number once the platform tells', async () => {
    // erin never got the status, so the service never learned her LID: the reply names her by LID only
    const r = await emu.reply(msgId, { from: erin.number, text: 'hi from a LID', via: 'lid', force: true })
    const ev = await events.latest('status-reply', (p) => p.reply.messageId === r.messageId, 15_000)
    assert.deepEqual([ev.reply.number, ev.reply.jid], [null, `${erin.lid}@lid`])
    emu.revealLid(erin.number, { to: OWN })
    await waitFor(async () => (await replies()).find((x) => x.messageId === r.messageId)?.number === erin.number, 15_000, 'erin\'s number')
  })

  const expectedReplies = 3
  const summary = async () => {
    const [listed] = (await api().get<Array<{ id: string, viewerCount: number, reactionCount: number, replyCount: number }>>(`/sessions/${SID}/sent-statuses`))
      .filter((s) => s.id === statusId)
    const stats = await api().get<{ totalReactions: number, totalReplies: number }>('/stats')
    return { reactionCount: listed.reactionCount, replyCount: listed.replyCount, totalReactions: stats.totalReactions, totalReplies: stats.totalReplies }
  }

  await t.test('counted in sent-statuses and /api/stats; everything was acknowledged after its commit', async () => {
    assert.deepEqual(await summary(), { reactionCount: 2, replyCount: expectedReplies, totalReactions: 2, totalReplies: expectedReplies })
    await waitFor(async () => emu.unackedCount(OWN) === 0, 10_000, 'every message acked')
  })

  await t.test('a restart keeps them; a reply sent while the service was down arrives after it', async () => {
    const before = { reactions: await reactions(), replies: await replies() }
    await svc.stop()
    // while the service is down: one more reply waits in the emulator's offline queue
    const late = await emu.reply(msgId, { from: carol.number, text: 'sent while you were away' })
    assert.equal(late.queuedFor, 1)
    await start()
    await waitFor(async () => (await replies()).some((r) => r.messageId === late.messageId), 30_000, 'the queued reply')
    assert.deepEqual(await reactions(), before.reactions)
    assert.deepEqual((await replies()).slice(0, expectedReplies), before.replies)
    assert.deepEqual(await summary(), { reactionCount: 2, replyCount: expectedReplies + 1, totalReactions: 2, totalReplies: expectedReplies + 1 })
    await waitFor(async () => emu.unackedCount(OWN) === 0, 10_000, 'every message acked')
  })

  await t.test('deleting the status removes its reactions and replies', async () => {
    await api().call('DELETE', `/sessions/${SID}/delete-status/${statusId}`)
    await assert.rejects(reactions(), (e: HttpError) => e.status === 404 && /Status not found/.test(e.body))
    await assert.rejects(replies(), (e: HttpError) => e.status === 404)
    await assert.rejects(api().get(`/sessions/nope/status-replies/${statusId}`), (e: HttpError) => e.status === 404 && /Session not found/.test(e.body))
    const db = new Database(join(svc.dataDir, 'status-tracker.db'), { readonly: true, fileMustExist: true })
    try {
      assert.equal(db.prepare('select (select count(*) from status_reactions) + (select count(*) from status_replies)').pluck().get(), 0)
    } finally {
      db.close()
    }
    const stats = await api().get<{ totalReactions: number, totalReplies: number }>('/stats')
    assert.deepEqual([stats.totalReactions, stats.totalReplies], [0, 0])
  })
})
