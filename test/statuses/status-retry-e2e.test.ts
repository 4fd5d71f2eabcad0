import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { StatusRecord } from '@status-tracker/emulator'
import type { StatusRetrySeen } from '../../src/platform/types.js'
import { waitFor } from '../helper.js'
import { startStack, type Stack } from '../stack.js'

// Status retry receipts (docs/platform.md "Status retry receipts"), through the HTTP API and real Baileys
// against the emulator: a recipient device that cannot decrypt a status sends <receipt type="retry">; the
// service answers WA Web's way (whatsapp-rust src/retry.rs retransmit_status_message: the status again to
// status@broadcast, a sender key distribution message for that device only), the emulator checks the answer
// (strict: an answer to the device itself, rc14's way, is not read as the status), the device reads it and its
// later view is recorded. Also: the sender key on every post to the poster's own devices (whatsapp-rust #999),
// and a statuses' messageSecret (item 6 of issue 30).

const OWN = '4915300000001'
const A = '4915300000011'
const B = '4915300000012'
const C = '4915300000013'
const D = '4915300000014'
const SID = 'retry'

interface Sent { statusId: string, platformMessageId: string, state: string }

async function send (s: Stack, body: Record<string, unknown>): Promise<Sent> {
  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: body })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: Sent }>().data
}

async function viewers (s: Stack, statusId: string): Promise<Array<{ number: string | null }>> {
  const res = await s.api({ method: 'GET', url: `/api/sessions/${SID}/status-viewers/${statusId}` })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: Array<{ number: string | null }> }>().data
}

async function retriesMetric (s: Stack, outcome: string): Promise<number> {
  const res = await s.api({ method: 'GET', url: '/metrics' })
  assert.equal(res.statusCode, 200, res.body)
  const line = res.body.split('\n').find((l) => l.startsWith(`status_tracker_status_retries_total{outcome="${outcome}"}`))
  return line === undefined ? 0 : Number(line.split(' ').pop())
}

/** The status once every retry of it was answered (or `retries` of them were asked, when more). */
async function retried (s: Stack, id: string, retries: number): Promise<StatusRecord> {
  await s.emu.waitForStatus((r) => r.id === id && r.retries.length >= retries && r.retries.every((x) => x.answered), 20_000)
  await s.emu.settled()
  return s.emu.status(id)
}

test('status retry receipts answered the WA Web way, through real Baileys', { timeout: 170_000 }, async (t) => {
  const s = await startStack(t, {}, { autoCreateContacts: false })
  s.emu.addContact({ number: A })
  s.emu.addContact({ number: B, devices: 2 })
  s.emu.addContact({ number: C, devices: 2 })
  s.emu.addContact({ number: D })
  s.emu.createAccount(OWN)
  // another WA Web of the same account, played by the emulator (it decrypts what it is sent)
  const ownOther = s.emu.addOwnDevice(OWN)
  const seen: StatusRetrySeen[] = []
  const onRetry = (e: StatusRetrySeen): void => { seen.push(e) }
  s.app.platform.on('status-retry', onRetry)
  t.after(() => { s.app.platform.off('status-retry', onRetry) })
  await s.link(SID, OWN)
  const lid = (n: string): string => `${n === OWN ? s.emu.getAccount(OWN).lid : s.emu.getContact(n).lid}@lid`

  let first!: Sent
  await t.test('a device that failed its first decrypt asks again; the status comes again to status@broadcast with its SKDM, it reads it, and its view is recorded', async () => {
    s.emu.failNextDecrypt(A)
    first = await send(s, { type: 'text', content: 'again please', targetNumbers: `${A},${B}` })
    assert.equal(first.state, 'sent')
    const record = await retried(s, first.platformMessageId, 1)
    assert.equal(record.retries.length, 1, JSON.stringify(record.retries))
    const [retry] = record.retries
    assert.equal(retry.requester, lid(A))
    assert.equal(retry.count, 1)
    assert.equal(retry.answeredTo, 'status@broadcast', 'answered to status@broadcast, not to the device')
    assert.equal(retry.skdm, true, 'with a sender key distribution message for the device')
    assert.equal(retry.decrypted, true, 'the device read it')
    assert.deepEqual(retry.violations, [])
    const failed = record.deliveries.find((d) => d.number === A && !d.resend)
    assert.equal(failed?.decrypted, false, 'its first delivery failed')
    assert.ok(record.deliveries.some((d) => d.number === A && d.resend === true && d.decrypted), 'the answer decrypted')
    assert.equal(record.messageSecret, true, 'the status carries a 32-byte messageSecret')
    await waitFor(() => seen.find((e) => e.messageId === first.platformMessageId), 10_000, 'the status-retry event')
    assert.deepEqual(seen.filter((e) => e.messageId === first.platformMessageId).map((e) => [e.outcome, e.device, e.count]), [['answered', lid(A), 1]])
    assert.equal(await retriesMetric(s, 'answered'), 1)
    await s.emu.sendView(first.platformMessageId, { viewer: A, via: 'lid' })
    await waitFor(async () => (await viewers(s, first.statusId)).some((v) => v.number === A), 10_000, 'A recorded as a viewer')
  })

  await t.test('a phone-number requester is answered at its LID device; a second retry carries keys and is answered too', async () => {
    s.emu.failNextDecrypt(B, { device: 1, times: 2, via: 'pn' })
    const sent = await send(s, { type: 'text', content: 'twice', targetNumbers: `${A},${B}` })
    const record = await retried(s, sent.platformMessageId, 2)
    await waitFor(() => seen.filter((e) => e.messageId === sent.platformMessageId).length === 2 || undefined, 10_000, 'both answers acknowledged')
    assert.deepEqual(seen.filter((e) => e.messageId === sent.platformMessageId).map((e) => [e.outcome, e.requester, e.device, e.count]), [
      ['answered', `${B}:1@s.whatsapp.net`, `${lid(B).replace('@lid', '')}:1@lid`, 1],
      ['answered', `${B}:1@s.whatsapp.net`, `${lid(B).replace('@lid', '')}:1@lid`, 2]
    ])
    assert.deepEqual(record.retries.map((r) => [r.requester, r.count, r.answeredTo, r.skdm]), [
      [`${B}:1@s.whatsapp.net`, 1, 'status@broadcast', true],
      [`${B}:1@s.whatsapp.net`, 2, 'status@broadcast', true]
    ])
    assert.deepEqual(record.retries.map((r) => r.decrypted), [false, true], 'it failed once more, then read it')
    for (const r of record.retries) assert.deepEqual(r.violations, [])
    const answers = record.deliveries.filter((d) => d.resend === true)
    assert.deepEqual(answers.map((d) => d.jid), [`${lid(B).replace('@lid', '')}:1@lid`, `${lid(B).replace('@lid', '')}:1@lid`], 'each answer addressed its LID device')
    await s.emu.sendView(sent.platformMessageId, { viewer: B })
    await waitFor(async () => (await viewers(s, sent.statusId)).some((v) => v.number === B), 10_000, 'B recorded as a viewer')
  })

  await t.test('bounded as WA Web: a fifth retry of one message (count 5) is refused, the four before it answered', async () => {
    s.emu.failNextDecrypt(D, { times: 5 })
    const sent = await send(s, { type: 'text', content: 'five times', targetNumbers: D })
    await waitFor(() => seen.filter((e) => e.messageId === sent.platformMessageId).length === 5 || undefined, 30_000, 'five retries taken')
    const mine = seen.filter((e) => e.messageId === sent.platformMessageId)
    assert.deepEqual(mine.map((e) => [e.count, e.outcome]), [[1, 'answered'], [2, 'answered'], [3, 'answered'], [4, 'answered'], [5, 'too-many']])
    await s.emu.settled()
    const record = s.emu.status(sent.platformMessageId)
    assert.deepEqual(record.retries.map((r) => r.answered), [true, true, true, true, false])
    assert.equal(await retriesMetric(s, 'too-many'), 1)
  })

  await t.test("the poster's own devices get the key on every post; a contact's devices that hold it get none", async () => {
    const sent = await send(s, { type: 'text', content: 'own devices', targetNumbers: `${A},${B}` })
    await s.emu.waitForStatus((r) => r.id === sent.platformMessageId && r.decrypted, 15_000)
    await s.emu.settled()
    const record = s.emu.status(sent.platformMessageId)
    assert.deepEqual(record.errors, [])
    assert.deepEqual([...record.skdmDevices].sort(), [lid(OWN), ownOther.lidJid].sort(), 'only the own phone and the own other device')
    assert.ok(record.deliveries.some((d) => d.number === OWN && d.device === ownOther.device && d.decrypted), 'the own other device read it')
  })

  await t.test('a primary marked as lacking the key (its retry could not be answered) gets it again at the next post, and so do its companions', async () => {
    const one = await send(s, { type: 'text', content: 'to C', targetNumbers: C })
    await s.emu.waitForStatus((r) => r.id === one.platformMessageId && r.decrypted, 15_000)
    await s.emu.settled()
    assert.ok(s.emu.status(one.platformMessageId).skdmDevices.includes(lid(C)))
    // C's phone asks for it again; the platform refuses the answer (479): the phone stays marked as lacking the key
    s.emu.fault(OWN, 'reject-next-status')
    s.emu.requestStatusRetry(one.platformMessageId, { number: C, device: 0 })
    const refused = await waitFor(() => seen.find((e) => e.messageId === one.platformMessageId), 15_000, 'the refused retry answer')
    assert.deepEqual([refused.outcome, refused.device, refused.error], ['refused', lid(C), '479'])
    const two = await send(s, { type: 'text', content: 'to C again', targetNumbers: C })
    await s.emu.waitForStatus((r) => r.id === two.platformMessageId && r.decrypted, 15_000)
    await s.emu.settled()
    const record = s.emu.status(two.platformMessageId)
    const cUser = lid(C).replace('@lid', '')
    // whatsapp-rust #872: a device holds the key only if its primary does too, so C's companion gets it again
    assert.deepEqual([...record.skdmDevices].sort(), [lid(OWN), ownOther.lidJid, lid(C), `${cUser}:1@lid`].sort())
    for (const device of [0, 1]) assert.ok(record.deliveries.some((d) => d.number === C && d.device === device && d.decrypted), `C:${device} read it`)
  })
})
