import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { startEmulator, testCertPaths, type DirectMessageRecord, type Emulator } from '@status-tracker/emulator'
import { SQLite as Database } from '../../src/db/sqlite/driver.js'
import { connectSocket, emulatorApi, HttpError, linkSessions, serviceApi } from '../support/clients.js'
import { tempDir } from '../support/processes.js'
import { spawnService, type ServiceProc } from '../support/service.js'
import { waitFor } from '../support/wait.js'
import type { EventPayloads } from '../../schemas/events.js'
import type { ContactStatusPage } from '../../schemas/contact-statuses.js'
import type { SentStatus } from '../../schemas/status.js'
import { EventRecorder } from '../events.js'

// Issue 39, items 2 and 4, end to end: the service as a real process, real Baileys, the strict emulator (one stack
// for the file's cases). A status mentioning two contacts carries WA Web's <meta><mentioned_users> and each
// mentioned contact's devices decrypt WA Web's status mention message (statusMentionMessage around a
// STATUS_MENTION_MESSAGE protocolMessage naming the status); a sixth mention is a 400 with nothing sent or stored;
// a contact's status naming the account is marked mentionsMe and announced (socket.io and the webhook outbox); a
// group status (<status from=group>, groupStatusMessageV2) lands in the feed with its group.

const OWN = '15557900001'
const SID = 'mentions'

let emu: Emulator
let svc: ServiceProc
let api: ReturnType<typeof serviceApi>
const dir = tempDir('st-mentions-')
before(async () => {
  emu = await startEmulator({ tls: testCertPaths() })
  svc = await spawnService({ dir: dir.path, emulator: emu, env: { ALLOW_PRIVATE_URLS: 'true', SCHEDULE_ALLOW_SECONDS: 'true' } })
  api = serviceApi(svc.base)
  await linkSessions(api, emulatorApi(emu.controlUrl), [{ sessionId: SID, number: OWN }])
})
after(async () => {
  await svc?.stop(2000)
  await emu?.stop()
  dir.rm()
})

/** What the contact's devices decrypted, through the emulator's control API. */
async function decryptedBy (number: string): Promise<DirectMessageRecord[]> {
  const res = await fetch(`${emu.controlUrl}/contacts/${number}/messages`)
  assert.equal(res.status, 200)
  return ((await res.json()) as { messages: DirectMessageRecord[] }).messages
}

test('a status mentioning two contacts: the post names them, is not refused, and both devices of each decrypt the mention message', { timeout: 120_000 }, async () => {
  const [a, b, c] = ['15557900011', '15557900012', '15557900013'].map((number) => emu.addContact({ number }))
  emu.addContactDevice(a.number)
  // b is mentioned without being in targetNumbers: added to the audience
  const sent = await api.post<{ statusId: string, platformMessageId: string, contactCount: number, state: string }>(`/sessions/${SID}/send-status`, {
    type: 'text', content: 'hello you two', targetNumbers: `${a.number},${c.number}`, mentions: [a.number, b.number]
  })
  assert.equal(sent.state, 'sent')
  assert.equal(sent.contactCount, 3, 'the mentioned number outside the audience was added to it')
  const record = await emu.waitForStatus((s) => s.id === sent.platformMessageId && s.decrypted)
  assert.equal(record.rejected, undefined, 'the post was not refused')
  assert.deepEqual(new Set(record.mentionedUsers), new Set([`${a.lid}@lid`, `${b.lid}@lid`]), "WA Web's <mentioned_users>, by LID")
  assert.ok(record.recipients.includes(b.number), 'the mentioned contact got the status')

  for (const [contact, devices] of [[a, 2], [b, 1]] as const) {
    const notices = await waitFor(async () => {
      const got = (await decryptedBy(contact.number)).filter((m) => m.statusMention?.statusId === sent.platformMessageId)
      return got.length >= devices ? got : undefined
    }, 30_000, `the mention message at ${contact.number}`)
    assert.deepEqual(notices.map((n) => n.device).sort(), devices === 2 ? [0, 1] : [0])
    for (const n of notices) {
      assert.equal(n.decrypted, true)
      assert.equal(n.meta.is_status_mention, 'true')
      assert.deepEqual(n.statusMention, { statusId: sent.platformMessageId, remoteJid: 'status@broadcast', fromMe: true, type: 25 })
    }
  }
  assert.deepEqual(await decryptedBy(c.number), [], 'a contact not mentioned is told nothing')

  const listed = (await api.get<SentStatus[]>(`/sessions/${SID}/sent-statuses`)).find((s) => s.id === sent.statusId)
  assert.deepEqual(listed?.mentions, [a.number, b.number])
})

test('six mentions: 400 naming mentions, nothing sent, nothing stored', { timeout: 60_000 }, async () => {
  const numbers = Array.from({ length: 6 }, (_, i) => emu.addContact({ number: `155579000${30 + i}` }).number)
  const statusesBefore = emu.statuses().length
  const listedBefore = (await api.get<SentStatus[]>(`/sessions/${SID}/sent-statuses`)).length
  await assert.rejects(api.post(`/sessions/${SID}/send-status`, { type: 'text', content: 'too many', mentions: numbers }), (err: unknown) => {
    assert.ok(err instanceof HttpError)
    assert.equal(err.status, 400)
    assert.match(err.body, /mentions/)
    return true
  })
  await emu.settled()
  assert.equal(emu.statuses().length, statusesBefore, 'the emulator saw no status')
  assert.equal((await api.get<SentStatus[]>(`/sessions/${SID}/sent-statuses`)).length, listedBefore, 'no status row')
  for (const n of numbers) assert.deepEqual(await decryptedBy(n), [])
})

test('a scheduled status keeps its mentions; a schedule with six is refused naming mentions', { timeout: 60_000 }, async () => {
  const d = emu.addContact({ number: '15557900051' })
  const six = Array.from({ length: 6 }, (_, i) => `155579000${60 + i}`)
  await assert.rejects(api.post(`/sessions/${SID}/scheduled-statuses`, {
    status: { type: 'text', content: 'too many later', mentions: six }, at: new Date(Date.now() + 60_000).toISOString()
  }), (err: unknown) => err instanceof HttpError && err.status === 400 && /mentions/.test(err.body))
  const content = `later, mentioning ${d.number}`
  await api.post(`/sessions/${SID}/scheduled-statuses`, { status: { type: 'text', content, mentions: [d.number] }, at: new Date(Date.now() + 1500).toISOString() })
  const listed = await waitFor(async () => (await api.get<SentStatus[]>(`/sessions/${SID}/sent-statuses`)).find((s) => s.content === content && s.state === 'sent'), 30_000, 'the scheduled run')
  assert.deepEqual(listed.mentions, [d.number])
  await waitFor(async () => (await decryptedBy(d.number)).find((m) => m.statusMention?.statusId === listed.platformMessageId), 30_000, 'the mention message of the scheduled run')
})

test("a contact's status mentioning the account: mentionsMe, a contact-status-mention event and its webhook outbox row", { timeout: 60_000 }, async (t) => {
  const poster = emu.addContact({ number: '15557900021' })
  const other = emu.addContact({ number: '15557900022' })
  const hook = await api.post<{ id: string }>('/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['contact-status-mention'] })
  const socket = await connectSocket(svc.base)
  t.after(() => { socket.close() })
  const events = new EventRecorder<EventPayloads>()
  socket.onAny((event: keyof EventPayloads, payload: unknown) => { events.record(event, payload) })

  const plain = await emu.postContactStatus(OWN, { from: poster.number, text: 'about someone else', mentions: [other.number] })
  const named = await emu.postContactStatus(OWN, { from: poster.number, text: 'about you', mentions: [OWN, other.number] })
  const page = await waitFor(async () => {
    const p = await api.get<ContactStatusPage>(`/sessions/${SID}/contact-statuses`)
    return p.statuses.some((s) => s.id === named.id) && p.statuses.some((s) => s.id === plain.id) ? p : undefined
  }, 30_000, 'both statuses in the feed')
  assert.equal(page.statuses.find((s) => s.id === named.id)?.mentionsMe, true)
  assert.equal(page.statuses.find((s) => s.id === plain.id)?.mentionsMe, false)

  const announced = await waitFor(async () => events.all('contact-status-mention', (e) => e.sessionId === SID).find((e) => e.status.id === named.id), 15_000, 'contact-status-mention')
  assert.equal(announced.status.text, 'about you')
  assert.equal(events.all('contact-status-mention', (e) => e.status.id === plain.id).length, 0)

  const db = new Database(join(svc.dataDir, 'status-tracker.db'), { readonly: true, fileMustExist: true })
  t.after(() => { db.close() })
  // the dispatcher makes deliveries from the event log after its commit (plugins/webhooks/dispatch.ts), which
  // may be after the socket.io event: once in a whole npm test the row was not there yet when read at once
  const read = (): Array<{ event_type: string, body: string }> => db.prepare<[string], { event_type: string, body: string }>('select event_type, body from webhook_deliveries where webhook_id = ?').all(hook.id)
  await waitFor(() => read().length > 0, 15_000, 'the outbox row')
  const rows = read()
  assert.equal(rows.length, 1, 'one outbox row, for the status that names the account')
  assert.equal(rows[0].event_type, 'contact-status-mention')
  assert.match(rows[0].body, new RegExp(named.id))
  // acknowledged once committed
  const log = emu.contactStatusLog(OWN).statuses.find((s) => s.id === named.id)
  assert.equal(log?.deliveries[0].acked, true)
})

test('a group status lands in the feed with its group, the content unwrapped from groupStatusMessageV2', { timeout: 60_000 }, async () => {
  const poster = emu.addContact({ number: '15557900041' })
  const group = '120363400000000041@g.us'
  const text = await emu.postContactStatus(OWN, { from: poster.number, text: 'to the group', group })
  const media = await emu.postContactStatus(OWN, { from: poster.number, media: { mimetype: 'image/jpeg', size: 2048, caption: 'group picture' }, group })
  const page = await waitFor(async () => {
    const p = await api.get<ContactStatusPage>(`/sessions/${SID}/contact-statuses`)
    return [text.id, media.id].every((id) => p.statuses.some((s) => s.id === id)) ? p : undefined
  }, 30_000, 'the group statuses in the feed')
  const t1 = page.statuses.find((s) => s.id === text.id)!
  assert.equal(t1.type, 'text')
  assert.equal(t1.text, 'to the group')
  assert.equal(t1.groupJid, group)
  assert.equal(t1.groupSubject, null)
  assert.equal(t1.lid, `${poster.lid}@lid`)
  const m1 = page.statuses.find((s) => s.id === media.id)!
  assert.equal(m1.type, 'image')
  assert.equal(m1.caption, 'group picture')
  assert.equal(m1.groupJid, group)
  const log = emu.contactStatusLog(OWN).statuses.filter((s) => s.group === group)
  assert.equal(log.length, 2)
  for (const s of log) {
    assert.equal(s.deliveries[0].acked, true)
    assert.equal(s.deliveries[0].ack?.to, group, 'acked to the group')
    assert.deepEqual(s.receipts.map((r) => r.attrs.to), [group], 'the delivery receipt names the group')
  }
})
