import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { startEmulator, testCertPaths, type Emulator } from '@status-tracker/emulator'
import { connectSocket, emulatorApi, linkSessions, serviceApi } from '../support/clients.js'
import { tempDir } from '../support/processes.js'
import { API_KEY, spawnService, type ServiceProc } from '../support/service.js'
import { sleep, waitFor } from '../support/wait.js'
import type { EventPayloads } from '../../schemas/events.js'
import type { ContactStatusPage } from '../../schemas/contact-statuses.js'
import { EventRecorder } from '../events.js'

// Issue 30, item 1, end to end: the service as a real process, real Baileys, the strict emulator. Contacts' statuses
// arrive as top-level <status> stanzas (oxidezap/whatsapp-rust PR #1101); each is acked `class="status"` once
// committed, so the server never ends the stream (its deadline here is seconds, not 50 minutes), nothing is
// redelivered and the session never reconnects. No view receipt goes out unless asked.

const OWN = '15557700001'
const SID = 'watcher'
// the server's ack deadline, shortened from ~50 minutes: each post comes after the previous one's deadline has
// passed, so a stanza left unacked ends the stream before the next arrives (the service acks once committed:
// tens of milliseconds, so 1.2 s leaves room on a loaded machine)
const DEADLINE_MS = 1200
const POSTS = 20
const EVERY_MS = 1400

// one emulator, service and linked session for the file's two tests (the second reads only its own statuses)
let emu: Emulator
let svc: ServiceProc
let api: ReturnType<typeof serviceApi>
const dir = tempDir('st-contact-statuses-')
before(async () => {
  emu = await startEmulator({ tls: testCertPaths(), statusAckDeadlineMs: DEADLINE_MS })
  svc = await spawnService({ dir: dir.path, emulator: emu, env: { ALLOW_PRIVATE_URLS: 'true' } })
  api = serviceApi(svc.base)
  await linkSessions(api, emulatorApi(emu.controlUrl), [{ sessionId: SID, number: OWN }])
})
after(async () => {
  await svc?.stop(2000)
  await emu?.stop()
  dir.rm()
})

test("20 contacts' statuses over 27 seconds, each after the last one's ack deadline: each acked class=status, none redelivered, no stream error, no reconnect, no view receipt", { timeout: 180_000 }, async (t) => {
  const contacts = ['15557700011', '15557700012', '15557700013', '15557700014', '15557700015'].map((number) => emu.addContact({ number }))

  const socket = await connectSocket(svc.base)
  t.after(() => { socket.close() })
  const events = new EventRecorder<EventPayloads>()
  socket.onAny((event: keyof EventPayloads, payload: unknown) => { events.record(event, payload) })
  const loginsBefore = emu.ackStats(OWN).length
  const ownDevice = emu.getAccount(OWN).linkedDevices[0]

  const posted: Array<{ id: string, text: string, from: string }> = []
  const started = Date.now()
  for (let i = 0; i < POSTS; i++) {
    const contact = contacts[i % contacts.length]
    const text = `status ${i + 1} from ${contact.number}`
    const r = await emu.postContactStatus(OWN, { from: contact.number, text })
    assert.equal(r.deliveredTo, 1, `status ${i + 1} reached the linked device`)
    posted.push({ id: r.id, text, from: contact.number })
    if (i < POSTS - 1) await sleep(Math.max(0, started + (i + 1) * EVERY_MS - Date.now()))
  }
  // past the last deadline: a stanza left unacked would have ended the stream by now
  await sleep(DEADLINE_MS + 1000)
  t.diagnostic(`${POSTS} statuses over ${((Date.now() - started) / 1000).toFixed(0)} s`)

  const log = emu.contactStatusLog(OWN)
  assert.deepEqual(log.streamErrors, [], 'the server never ended the stream')
  assert.deepEqual(log.unmatchedAcks, [])
  assert.equal(log.statuses.length, POSTS)
  for (const s of log.statuses) {
    const contact = contacts.find((c) => c.number === s.from)!
    assert.equal(s.deliveries.length, 1)
    const [d] = s.deliveries
    assert.equal(d.acked, true, `${s.id} acked`)
    assert.equal(d.redelivered, 0, `${s.id} not redelivered`)
    assert.equal(d.delivered, 1)
    // WA Web's ack: class status, id, to status@broadcast, participant and type echoed, the own device as from
    assert.deepEqual(d.ack, { class: 'status', id: s.id, to: 'status@broadcast', participant: `${contact.lid}@lid`, type: 'text', from: ownDevice.jid })
    // and WA Web's delivery receipt (context="status"); never a read receipt
    assert.deepEqual(s.receipts.map((r) => r.attrs), [{ id: s.id, to: 'status@broadcast', participant: `${contact.lid}@lid`, context: 'status' }])
  }
  assert.equal(emu.ackStats(OWN).length, loginsBefore, 'no new login: the session never reconnected')
  assert.equal(emu.unackedCount(OWN), 0)
  assert.deepEqual(events.all('connection-status').filter((e) => e.sessionId === SID).map((e) => e.status), [], 'no connection change after linking')

  // each appears in contact-statuses, newest first, with its text
  const first = await api.get<ContactStatusPage>(`/sessions/${SID}/contact-statuses?limit=15`)
  const second = await api.get<ContactStatusPage>(`/sessions/${SID}/contact-statuses?limit=15&cursor=${first.nextCursor!}`)
  assert.equal(second.nextCursor, null)
  const listed = [...first.statuses, ...second.statuses]
  assert.deepEqual(listed.map((s) => [s.id, s.text, s.type]), [...posted].reverse().map((p) => [p.id, p.text, 'text']))
  for (const s of listed) {
    const contact = contacts.find((c) => c.number === posted.find((p) => p.id === s.id)!.from)!
    assert.equal(s.lid, `${contact.lid}@lid`)
    assert.equal(s.viewedAt, null)
  }
  assert.equal(events.all('contact-status', (e) => e.sessionId === SID).length, POSTS, 'one contact-status event each')

  // the owner asks: exactly one read receipt, in WA Web's shape; asking again sends nothing
  const target = posted[7]
  const contact = contacts.find((c) => c.number === target.from)!
  const viewed = await api.post<{ id: string, sent: boolean, viewedAt: string }>(`/sessions/${SID}/contact-statuses/${target.id}/view`)
  assert.equal(viewed.sent, true)
  const reads = await waitFor(async () => {
    const r = emu.contactStatusLog(OWN).statuses.flatMap((s) => s.receipts.filter((x) => x.type === 'read'))
    return r.length > 0 ? r : undefined
  }, 10_000, 'the read receipt')
  const again = await api.post<{ sent: boolean }>(`/sessions/${SID}/contact-statuses/${target.id}/view`)
  assert.equal(again.sent, false)
  await sleep(500)
  const allReads = emu.contactStatusLog(OWN).statuses.flatMap((s) => s.receipts.filter((x) => x.type === 'read'))
  assert.equal(allReads.length, 1, 'exactly one read receipt reached the emulator')
  const { t: stamp, ...attrs } = reads[0].attrs
  assert.match(stamp, /^\d+$/)
  assert.deepEqual(attrs, { to: 'status@broadcast', type: 'read', id: target.id, participant: `${contact.lid}@lid`, context: 'status' })
  assert.notEqual((await api.get<{ viewedAt: string | null }>(`/sessions/${SID}/contact-statuses/${target.id}`)).viewedAt, null)
})

test("a contact's media status: listed with type and size, downloaded only when asked", { timeout: 120_000 }, async () => {
  const alice = emu.addContact({ number: '15557700021' })
  const { id } = await emu.postContactStatus(OWN, { from: alice.number, media: { mimetype: 'image/jpeg', size: 5000, caption: 'look' } })
  const page = await waitFor(async () => {
    const p = await api.get<ContactStatusPage>(`/sessions/${SID}/contact-statuses`)
    return p.statuses.some((s) => s.id === id) ? p : undefined
  }, 15_000, 'the media status listed')
  // newest first: above the earlier test's statuses
  assert.deepEqual(page.statuses.slice(0, 1).map((s) => [s.id, s.type, s.caption, s.mediaType, s.mediaSize, s.text]), [[id, 'image', 'look', 'image/jpeg', 5000, null]])
  const uploadsBefore = emu.mediaUploads().length
  const res = await fetch(`${svc.base}/api/sessions/${SID}/contact-statuses/${id}/media?download=true`, { headers: { 'x-api-key': API_KEY } })
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('content-type'), 'image/jpeg')
  assert.match(res.headers.get('content-disposition') ?? '', /attachment/)
  assert.equal((await res.arrayBuffer()).byteLength, 5000)
  assert.equal(emu.mediaUploads().length, uploadsBefore)
  // a text status has no media
  const text = await emu.postContactStatus(OWN, { from: alice.number, text: 'plain' })
  await waitFor(async () => (await api.get<ContactStatusPage>(`/sessions/${SID}/contact-statuses`)).statuses.some((s) => s.id === text.id), 15_000, 'the text status listed')
  const none = await fetch(`${svc.base}/api/sessions/${SID}/contact-statuses/${text.id}/media`, { headers: { 'x-api-key': API_KEY } })
  assert.equal(none.status, 404)
  assert.deepEqual(await none.json(), { success: false, error: 'This status has no media' })
  // no receipt but the delivery ones
  assert.deepEqual(emu.contactStatusLog(OWN).statuses.filter((s) => s.id === id || s.id === text.id).flatMap((s) => s.receipts.map((r) => r.type)), ['delivery', 'delivery'])
})
