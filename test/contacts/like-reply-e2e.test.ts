import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { SentToContact } from '@status-tracker/emulator'
import type { ContactStatusPage, ContactStatusView } from '../../schemas/contact-statuses.js'
import { waitFor } from '../helper.js'
import { startStack } from '../stack.js'

// Issue 39, items 1 and 3, end to end through real Baileys and the strict emulator: the account likes a
// contact's status (an E2EE reaction to status@broadcast, pairwise to the poster's devices, no <meta
// status_setting>: whatsapp-rust PRs #563 and #569) and takes the like back (the same reaction, empty); it
// replies (a 1:1 message quoting the status). Each of the poster's devices decrypts what it was sent; the
// answers are listed with the status. One stack for the file's cases.

const OWN = '15557739001'
const ALICE = '15557739011'
const SID = 'answers'

test('the account likes and replies to its contacts\' statuses', { timeout: 240_000 }, async (t) => {
  const s = await startStack(t, { RATE_LIMIT_MAX: '1000000', ALLOW_PRIVATE_URLS: 'true' })
  const alice = s.emu.addContact({ number: ALICE, devices: 2 })
  await s.link(SID, OWN)
  const aliceLid = `${alice.lid}@lid`

  async function contactStatus (id: string): Promise<ContactStatusView> {
    return await waitFor(async () => {
      const res = await s.api({ method: 'GET', url: `/api/sessions/${SID}/contact-statuses/${id}` })
      return res.statusCode === 200 ? res.json<{ data: ContactStatusView }>().data : undefined
    }, 15_000, `contact status ${id} recorded`)
  }
  async function sentWith (id: string): Promise<SentToContact> {
    return await waitFor(() => {
      const e = s.emu.sentToContacts(OWN).find((x) => x.id === id)
      return e !== undefined && e.deliveries.length > 0 ? e : undefined
    }, 15_000, `what the account sent (${id}) read by the contact's devices`)
  }

  // a 1:1 message (a reply) as each of alice's devices decrypted it (the emulator's inbox)
  async function readByAlice (id: string): Promise<ReturnType<typeof s.emu.directMessages>> {
    return await waitFor(() => {
      const r = s.emu.directMessages(ALICE).filter((m) => m.id === id)
      return r.length >= 2 ? r : undefined
    }, 15_000, `message ${id} read by alice's devices`)
  }

  const text = await s.emu.postContactStatus(OWN, { from: ALICE, text: 'sunset at the pier' })
  const media = await s.emu.postContactStatus(OWN, { from: ALICE, media: { mimetype: 'image/jpeg', size: 2048, caption: 'the pier' } })
  const before = await contactStatus(text.id)
  assert.equal(before.likedAt, null)
  assert.deepEqual(before.replies, [])

  await t.test('a like reaches each of the poster\'s devices as a reaction naming the status; listed as likedAt', async () => {
    const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/${text.id}/like`, payload: {} })
    assert.equal(res.statusCode, 200, res.body)
    const liked = res.json<{ data: { id: string, likedAt: string, likeEmoji: string, messageId: string } }>().data
    assert.equal(liked.id, text.id)
    assert.equal(liked.likeEmoji, '💚', "WA Web's like by default")
    const sent = await sentWith(liked.messageId)
    assert.equal(sent.kind, 'status-reaction')
    assert.equal(sent.refused, undefined)
    assert.equal(sent.to, ALICE)
    assert.equal(sent.type, 'reaction')
    assert.deepEqual(sent.deliveries.map((d) => d.device).sort(), [0, 1], 'both of the poster\'s devices')
    assert.deepEqual(sent.missingDevices, [])
    for (const d of sent.deliveries) {
      assert.equal(d.decrypted, true, d.error)
      assert.equal(d.error, undefined)
      const reaction = (d.message as { reactionMessage: { key: Record<string, unknown>, text: string } }).reactionMessage
      assert.deepEqual({ ...reaction.key }, { remoteJid: 'status@broadcast', id: text.id, fromMe: false, participant: aliceLid })
      assert.equal(reaction.text, '💚')
    }
    // the account's phone gets WA Web's DeviceSentMessage copy naming the poster
    const phone = sent.ownCopies.find((c) => c.device === 0)
    assert.equal(phone?.decrypted, true, phone?.error)
    type Dsm = { deviceSentMessage: { destinationJid: string, message: { reactionMessage: { key: { id: string }, text: string } } } }
    const dsm = (phone!.message as Dsm).deviceSentMessage
    assert.equal(dsm.destinationJid, aliceLid)
    assert.deepEqual([dsm.message.reactionMessage.key.id, dsm.message.reactionMessage.text], [text.id, '💚'])
    const listed = await contactStatus(text.id)
    assert.equal(listed.likedAt, liked.likedAt)
    assert.equal(listed.likeEmoji, '💚')
    // nothing the strict emulator refused
    assert.deepEqual(s.emu.sentToContacts(OWN).filter((e) => e.refused !== undefined), [])
  })

  await t.test('DELETE takes the like back: the same reaction with empty text', async () => {
    const res = await s.api({ method: 'DELETE', url: `/api/sessions/${SID}/contact-statuses/${text.id}/like` })
    assert.equal(res.statusCode, 200, res.body)
    const unliked = res.json<{ data: { likedAt: string | null, messageId: string } }>().data
    assert.equal(unliked.likedAt, null)
    const sent = await sentWith(unliked.messageId)
    for (const d of sent.deliveries) {
      assert.equal(d.decrypted, true, d.error)
      const reaction = (d.message as { reactionMessage: { key: { id: string }, text?: string } }).reactionMessage
      assert.equal(reaction.key.id, text.id)
      assert.equal(reaction.text ?? '', '', 'an empty reaction removes it')
    }
    assert.equal((await contactStatus(text.id)).likedAt, null)
    // another emoji, on the media status
    const other = await s.api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/${media.id}/like`, payload: { emoji: '😂' } })
    assert.equal(other.statusCode, 200, other.body)
    assert.equal((await contactStatus(media.id)).likeEmoji, '😂')
  })

  await t.test('a reply decrypts at the poster as a message quoting the status; listed under replies', async () => {
    const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/${media.id}/reply`, payload: { text: 'lovely light' } })
    assert.equal(res.statusCode, 200, res.body)
    const reply = res.json<{ data: { id: string, messageId: string, sentAt: string } }>().data
    const read = await readByAlice(reply.messageId)
    assert.deepEqual(read.map((d) => d.device).sort(), [0, 1])
    for (const d of read) {
      assert.equal(d.decrypted, true, d.error)
      type Quoting = Record<string, unknown> & { quotedMessage: { imageMessage: { caption: string, mimetype: string } } }
      const ext = (d.message as { extendedTextMessage: { text: string, contextInfo: Quoting } }).extendedTextMessage
      assert.equal(ext.text, 'lovely light')
      assert.equal(ext.contextInfo.stanzaId, media.id)
      assert.equal(ext.contextInfo.participant, aliceLid)
      assert.equal(ext.contextInfo.remoteJid, 'status@broadcast')
      assert.equal(ext.contextInfo.quotedMessage.imageMessage.caption, 'the pier', 'the status as it was read')
      assert.equal(ext.contextInfo.quotedMessage.imageMessage.mimetype, 'image/jpeg')
    }
    // a second reply, to the text status
    const second = await s.api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/${text.id}/reply`, payload: { text: 'where is that?' } })
    assert.equal(second.statusCode, 200, second.body)
    const quoted = await readByAlice(second.json<{ data: { messageId: string } }>().data.messageId)
    const ctx = (quoted[0].message as { extendedTextMessage: { contextInfo: { quotedMessage: unknown } } }).extendedTextMessage.contextInfo
    assert.deepEqual(ctx.quotedMessage, { extendedTextMessage: { text: 'sunset at the pier' } })

    const page = await s.api({ method: 'GET', url: `/api/sessions/${SID}/contact-statuses` })
    const statuses = page.json<{ data: ContactStatusPage }>().data.statuses
    const m = statuses.find((x) => x.id === media.id)!
    assert.deepEqual(m.replies.map((r) => [r.messageId, r.text, r.sentAt]), [[reply.messageId, 'lovely light', reply.sentAt]])
    assert.equal(m.likeEmoji, '😂')
    assert.deepEqual(statuses.find((x) => x.id === text.id)!.replies.map((r) => r.text), ['where is that?'])
  })

  await t.test('unknown status: 404; bad reply text or emoji: 400 naming the field; nothing sent', async () => {
    const sentBefore = s.emu.sentToContacts(OWN).length
    for (const [method, path, payload] of [['POST', 'like', {}], ['DELETE', 'like', undefined], ['POST', 'reply', { text: 'hi' }]] as const) {
      const res = await s.api({ method, url: `/api/sessions/${SID}/contact-statuses/NOSUCHSTATUS/${path}`, ...(payload !== undefined ? { payload } : {}) })
      assert.equal(res.statusCode, 404, `${method} ${path}: ${res.body}`)
      assert.deepEqual(res.json(), { success: false, error: 'Status not found' })
    }
    for (const payload of [{}, { text: '' }, { text: '   ' }, { text: 'x'.repeat(4097) }, { text: 5 }]) {
      const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/${text.id}/reply`, payload })
      assert.equal(res.statusCode, 400, JSON.stringify(payload))
      assert.match(res.json<{ error: string }>().error, /text/, JSON.stringify(payload))
    }
    const bad = await s.api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/${text.id}/like`, payload: { emoji: 'love' } })
    assert.equal(bad.statusCode, 400)
    assert.match(bad.json<{ error: string }>().error, /emoji/)
    assert.equal(s.emu.sentToContacts(OWN).length, sentBefore, 'nothing reached the platform')
  })

  await t.test("contacts' likes of the account's own status in WA Web's E2EE form (from status@broadcast) and as encReactionMessage are read", async () => {
    const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content: 'like me', targetNumbers: ALICE } })
    assert.equal(res.statusCode, 200, res.body)
    const { statusId, platformMessageId } = res.json<{ data: { statusId: string, platformMessageId: string } }>().data
    await s.emu.waitForStatus((x) => x.id === platformMessageId && x.decrypted)
    const reactions = async (): Promise<Array<{ number: string | null, emoji: string }>> =>
      (await s.api({ method: 'GET', url: `/api/sessions/${SID}/status-reactions/${statusId}` })).json<{ data: Array<{ number: string | null, emoji: string }> }>().data
    await s.emu.react(platformMessageId, { from: ALICE, emoji: '🔥', via: 'lid', form: 'status' })
    await waitFor(async () => (await reactions()).some((r) => r.number === ALICE && r.emoji === '🔥'), 15_000, 'the like from status@broadcast read')
    await s.emu.react(platformMessageId, { from: ALICE, emoji: '😮', via: 'lid', form: 'status', encrypted: true })
    await waitFor(async () => (await reactions()).some((r) => r.number === ALICE && r.emoji === '😮'), 15_000, 'the encrypted reaction read with the status secret')
    await s.emu.react(platformMessageId, { from: ALICE, emoji: '', via: 'lid', encrypted: true })
    await waitFor(async () => (await reactions()).length === 0, 15_000, 'the encrypted removal read')
  })

  await t.test('a like the platform refuses is not recorded', async () => {
    const fresh = await s.emu.postContactStatus(OWN, { from: ALICE, text: 'refused like' })
    await contactStatus(fresh.id)
    s.emu.refuseStatuses(OWN, { error: 479, count: 1 })
    const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/${fresh.id}/like`, payload: {} })
    assert.equal(res.statusCode, 500, res.body)
    assert.match(res.json<{ error: string }>().error, /refused the like \(error 479\)/)
    assert.equal((await contactStatus(fresh.id)).likedAt, null)
    // the next one goes through
    const again = await s.api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/${fresh.id}/like`, payload: {} })
    assert.equal(again.statusCode, 200, again.body)
    assert.notEqual((await contactStatus(fresh.id)).likedAt, null)
  })

  await t.test('a like, a reply and a view that arrive while the session reconnects after a drop wait for it and go out', async () => {
    const fresh = await s.emu.postContactStatus(OWN, { from: ALICE, text: 'liked through a reconnect' })
    await contactStatus(fresh.id)
    s.emu.fault(OWN, 'drop')
    // the reconnect's first rung is 1 s away: the three requests below arrive in between
    await waitFor(() => s.app.platform.snapshot(SID)?.connected === false && s.app.platform.reachable(SID), 5000, 'the session to be reconnecting')
    const asked = s.app.platform.snapshot(SID)
    const [like, reply, view] = await Promise.all([
      s.api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/${fresh.id}/like`, payload: {} }),
      s.api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/${fresh.id}/reply`, payload: { text: 'back again' } }),
      s.api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/${fresh.id}/view` })
    ])
    assert.equal(asked?.connected, false, 'all three arrived while the session was not connected')
    assert.equal(like.statusCode, 200, like.body)
    assert.equal(reply.statusCode, 200, reply.body)
    assert.equal(view.statusCode, 200, view.body)
    assert.equal(view.json<{ data: { sent: boolean } }>().data.sent, true)
    await sentWith(like.json<{ data: { messageId: string } }>().data.messageId)
    await readByAlice(reply.json<{ data: { messageId: string } }>().data.messageId)
    const listed = await contactStatus(fresh.id)
    assert.notEqual(listed.likedAt, null)
    assert.notEqual(listed.viewedAt, null)
  })

  await t.test('not connected: 500 WhatsApp is not connected, nothing recorded', async () => {
    await s.app.platform.releaseSession(SID)
    const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/${text.id}/like`, payload: {} })
    assert.equal(res.statusCode, 500, res.body)
    assert.deepEqual(res.json(), { success: false, error: 'WhatsApp is not connected' })
    assert.equal((await contactStatus(text.id)).likedAt, null)
  })
})
