import assert from 'node:assert/strict'
import { test } from 'node:test'
import { waitFor } from '../helper.js'
import { startStack, type Stack } from '../stack.js'
import { dbOf } from '../support/db.js'

// Refusals told truthfully (issue 30, item 2) and receipts read fully (item 4), through the HTTP API, real
// Baileys and the emulator. Chunks of 2 recipients: a post to three contacts is [own, A] then [B, C].

const OWN = '4915100000101'
const A = '4915100000111'
const B = '4915100000112'
const C = '4915100000113'
const SID = 'main'
const jid = (n: string): string => `${n}@s.whatsapp.net`

interface Answer { statusId: string, platformMessageId: string, contactCount: number, message: string, state: string, sentCount: number }
interface Listed { id: string, state: string, sentCount: number, error: string | null }
interface Deleted { deletedFromPlatform: boolean, deletedFromDatabase: boolean, note: string }

async function post (s: Stack, targetNumbers: string[], content: string) {
  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content, targetNumbers: targetNumbers.join(',') } })
  return { status: res.statusCode, body: res.json<{ success: boolean, data: Answer, error: string }>() }
}

async function sent (s: Stack, targetNumbers: string[], content: string): Promise<Answer> {
  const { status, body } = await post(s, targetNumbers, content)
  assert.equal(status, 200, JSON.stringify(body))
  return body.data
}

async function revoke (s: Stack, statusId: string): Promise<Deleted> {
  const res = await s.api({ method: 'DELETE', url: `/api/sessions/${SID}/delete-status/${statusId}?revoke=true` })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: Deleted }>().data
}

async function listed (s: Stack): Promise<Listed[]> {
  const res = await s.api({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: Listed[] }>().data
}

async function recipientsOf (s: Stack, statusId: string): Promise<string[]> {
  const rows = await dbOf(s.app).db.selectFrom('status_recipients').select('jid').where('status_id', '=', Number(statusId)).execute()
  return rows.map((r) => r.jid).sort()
}

test('refusals and receipts through real Baileys against the emulator', { timeout: 150_000 }, async (t) => {
  const s = await startStack(t, { STATUS_CHUNK_SIZE: '2' })
  for (const n of [A, B, C]) s.emu.addContact({ number: n })
  await s.link(SID, OWN)

  await t.test('a chunk refused with 479 after the first one went out: partial with the code, its recipients not counted, not revoked, not holding the key', async () => {
    s.emu.refuseStatuses(OWN, { error: 479, count: 1, after: 1 })
    const answer = await sent(s, [A, B, C], 'second chunk refused')
    assert.deepEqual([answer.state, answer.sentCount, answer.contactCount], ['partial', 1, 3])
    assert.match(answer.message, /^Status sent to 1 of 3 contacts; sending stopped: the platform refused status chunk 2\/2 \(error 479\)$/)
    const ev = await s.events.next('statuses-updated', (p) => p.statusId === answer.statusId && p.action === 'partial')
    assert.match(ev.message ?? '', /error 479/)
    assert.equal(s.events.all('status-sent').some((p) => p.statusId === answer.statusId), false, 'never sent')
    const row = (await listed(s)).find((r) => r.id === answer.statusId)
    assert.deepEqual([row?.state, row?.sentCount], ['partial', 1])
    assert.match(row?.error ?? '', /^Sending stopped after 1 of 3: the platform refused status chunk 2\/2 \(error 479\)$/)
    assert.deepEqual(await recipientsOf(s, answer.statusId), [OWN, A].map(jid).sort(), 'B and C are not on record')
    // the platform: the first chunk delivered, the second refused and delivered to nobody
    await s.emu.settled(10_000)
    const record = s.emu.status(answer.platformMessageId)
    assert.deepEqual([...record.recipients].sort(), [OWN, A].sort())
    assert.ok(record.deliveries.every((d) => d.decrypted), JSON.stringify(record.deliveries))
    assert.ok(s.emu.rejectedMessages().some((m) => m.id === answer.platformMessageId && m.error === 479))

    // B and C were not recorded as holding the sender key: the next post gives it to them and they decrypt it
    const next = await sent(s, [B, C], 'after the refusal')
    assert.equal(next.state, 'sent')
    const again = await s.emu.waitForStatus((r) => r.id === next.platformMessageId && r.recipients.includes(B) && r.recipients.includes(C), 10_000)
    await s.emu.settled(10_000)
    const deliveries = s.emu.status(again.id).deliveries.filter((d) => d.number === B || d.number === C)
    assert.ok(deliveries.length >= 2 && deliveries.every((d) => d.decrypted && d.skdm), JSON.stringify(deliveries))

    // a later revoke reaches exactly the recipients that have it
    const deleted = await revoke(s, answer.statusId)
    assert.equal(deleted.deletedFromPlatform, true, deleted.note)
    const revoked = await waitFor(() => { const r = s.emu.status(answer.platformMessageId); return r.revoked === true ? r : null }, 10_000, 'the revoke in the emulator')
    assert.deepEqual([...(revoked.revokedFor ?? [])].sort(), [OWN, A].sort())
  })

  await t.test('a single chunk refused with 479: no status (the error answer names the code), never sent', async () => {
    s.emu.refuseStatuses(OWN, { error: 479 })
    const { status, body } = await post(s, [A], 'only chunk refused')
    assert.equal(status, 500, JSON.stringify(body))
    assert.equal(body.success, false)
    assert.match(body.error, /error 479/)
    const ev = await s.events.next('statuses-updated', (p) => p.action === 'send-failed' && /error 479/.test(p.message ?? ''))
    assert.equal((await listed(s)).some((r) => r.id === ev.statusId), false)
    assert.equal(s.events.all('status-sent').some((p) => p.statusId === ev.statusId), false)
  })

  await t.test('a revoke refused with 479: deletedFromPlatform false with the code in note; the status stays up on the platform', async () => {
    const answer = await sent(s, [A, B], 'revoke refused')
    assert.equal(answer.state, 'sent')
    await s.emu.waitForStatus((r) => r.id === answer.platformMessageId && r.decrypted, 10_000)
    s.emu.refuseStatuses(OWN, { error: 479 })
    const deleted = await revoke(s, answer.statusId)
    assert.equal(deleted.deletedFromPlatform, false)
    assert.equal(deleted.deletedFromDatabase, true)
    assert.match(deleted.note, /the platform refused revoke chunk 1\/2 \(error 479\); the revoke reached 0 of 3 recipients/)
    await s.emu.settled(10_000)
    assert.notEqual(s.emu.status(answer.platformMessageId).revoked, true)
  })

  let receipted!: Answer
  await t.test('a delivery receipt with the feature-incapable error is no delivery, and is acknowledged', async () => {
    const answer = receipted = await sent(s, [A, B], 'receipts read fully')
    await s.emu.waitForStatus((r) => r.id === answer.platformMessageId && r.decrypted, 10_000)
    const report = async () => {
      const res = await s.api({ method: 'GET', url: `/api/sessions/${SID}/statuses/${answer.statusId}/report` })
      assert.equal(res.statusCode, 200, res.body)
      return res.json<{ data: { recipients: Array<{ number: string, deliveredAt: string | null }>, totals: { delivered: number } } }>().data
    }
    await s.emu.sendView(answer.platformMessageId, { viewer: B, type: 'delivery', via: 'lid', participantPn: true, featureIncapable: true })
    await s.emu.sendView(answer.platformMessageId, { viewer: A, type: 'delivery', via: 'lid', participantPn: true })
    const done = await waitFor(async () => { const r = await report(); return r.totals.delivered > 0 ? r : null }, 10_000, 'the delivery of A')
    assert.equal(done.totals.delivered, 1)
    assert.notEqual(done.recipients.find((r) => r.number === A)?.deliveredAt ?? null, null)
    assert.equal(done.recipients.find((r) => r.number === B)?.deliveredAt, null, 'B was not reached')
    // both stanzas were acknowledged (after the commit of their turn)
    await waitFor(() => s.emu.unackedCount(OWN) === 0, 10_000, 'every receipt acked')
  })

  await t.test("a simple receipt's stanza-level participant_pn names the viewer of a LID the client cannot map", async () => {
    const answer = receipted
    // a contact never sent to: nothing else maps its LID
    const stranger = s.emu.addContact({ number: '4915100000199' })
    await s.emu.sendView(answer.platformMessageId, { viewer: stranger.number, type: 'read', via: 'lid', participantPn: true, force: true })
    const ev = await s.events.next('status-viewers-update', (p) => p.statusId === answer.statusId && p.viewers.some((v) => v.number === stranger.number), 10_000)
    assert.equal(ev.viewers.find((v) => v.number === stranger.number)?.jid, jid(stranger.number))
  })

  // last: the 429 backs the session off for later posts (pacing)
  await t.test('a chunk refused once with 429 is waited out and sent again under the same id: every recipient decrypts it, the answer is sent', async () => {
    s.emu.refuseStatuses(OWN, { error: 429 })
    const answer = await sent(s, [A, B, C], 'pushed back once')
    assert.deepEqual([answer.state, answer.sentCount, answer.contactCount], ['sent', 3, 3])
    await s.events.next('status-sent', (p) => p.statusId === answer.statusId)
    assert.deepEqual(await recipientsOf(s, answer.statusId), [OWN, A, B, C].map(jid).sort())
    assert.deepEqual(s.emu.rejectedMessages().filter((m) => m.id === answer.platformMessageId).map((m) => m.error), [429])
    await s.emu.settled(10_000)
    const record = s.emu.status(answer.platformMessageId)
    assert.equal(record.chunks, 2, 'the refused stanza is not a chunk the platform took')
    assert.deepEqual([...record.recipients].sort(), [OWN, A, B, C].sort())
    assert.ok(record.deliveries.every((d) => d.decrypted), JSON.stringify(record.deliveries))
    assert.deepEqual(record.duplicateRecipients, [])
    // the send met the refusal itself: no late "rejected" on the status
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.equal((await listed(s)).find((r) => r.id === answer.statusId)?.error, null)
    assert.equal(s.events.all('statuses-updated').some((p) => p.statusId === answer.statusId && p.action === 'failed'), false)
  })
})
