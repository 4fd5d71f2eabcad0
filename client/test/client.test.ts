import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build, TEST_API_KEY } from '../../test/helper.js'
import { startStack } from '../../test/stack.js'
import { EventRecorder } from '../../test/events.js'
import { png } from '../../test/uploads/fixtures.js'
import { createClient, StatusTrackerError } from '../src/index.js'
import { connectEvents, type EventName, type EventPayload, type EventSocket } from '../src/events.js'

// The client against the real service: everything the program does goes through @status-tracker/client (REST
// and socket.io); only the phone's part (scanning the QR code, the contacts' receipts) is the emulator's.

const OWN = '4915300000201'
const A = '4915300000211'
const B = '4915300000212'
const SID = 'client'

type Events = { [E in EventName]: EventPayload<E> }

/** every event the client's socket receives, in the suite's one recorder (bounded waits) */
async function listen (socket: EventSocket): Promise<EventRecorder<Events>> {
  const recorder = new EventRecorder<Events>()
  socket.onAny((event: EventName, payload: unknown) => { recorder.record(event, payload) })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error('socket.io connect timed out')) }, 5000)
    socket.once('connect', () => { clearTimeout(timer); resolve() })
    socket.once('connect_error', (err) => { clearTimeout(timer); reject(err) })
  })
  return recorder
}

test('a program using only the client links a session, posts a status, reads its viewers and hears status-viewers-added', { timeout: 120_000 }, async (t) => {
  const s = await startStack(t)
  const st = createClient({ baseUrl: s.baseUrl, apiKey: TEST_API_KEY })
  const socket = connectEvents({ baseUrl: s.baseUrl, apiKey: TEST_API_KEY, socket: { reconnection: false } })
  t.after(() => { socket.close() })
  const events = await listen(socket)

  // link by QR: the code comes as the qr-code event and from GET …/qr-code; the emulator's phone scans it
  s.emu.createAccount(OWN)
  const created = await st.POST('/api/sessions', { body: { sessionId: SID, sessionName: 'Client test', authMethod: 'qrcode' } })
  assert.equal(created.sessionId, SID)
  assert.equal(created.authMethod, 'qrcode')
  const shown = await events.latest('qr-code', (e) => e.sessionId === SID, 15_000)
  assert.match(shown.qrCode, /^data:image\/png;base64,/)
  const current = await st.GET('/api/sessions/{sessionId}/qr-code', { params: { path: { sessionId: SID } } })
  await s.emu.scan(OWN, current.qrCode ?? shown.qrCode)
  const open = await events.latest('connection-status', (e) => e.sessionId === SID && e.connected, 30_000)
  assert.equal(open.ownNumber, OWN)
  assert.equal(typeof open.eventId, 'number', 'logged events carry their eventId')
  const status = await st.GET('/api/sessions/{sessionId}/connection-status', { params: { path: { sessionId: SID } } })
  assert.equal(status.connected, true)

  // post a text status to two contacts; the answer is the envelope's data
  const sent = await st.POST('/api/sessions/{sessionId}/send-status', {
    params: { path: { sessionId: SID } },
    body: { type: 'text', content: 'sent through the typed client', targetNumbers: `${A},${B}` }
  })
  assert.ok('platformMessageId' in sent, `the send waited and ended: ${JSON.stringify(sent)}`)
  const { statusId, platformMessageId } = sent
  assert.equal(sent.contactCount, 2, 'the two contacts addressed')
  await s.emu.waitForStatus((r) => r.id === platformMessageId && r.decrypted, 10_000)
  const listed = await st.GET('/api/sessions/{sessionId}/sent-statuses', { params: { path: { sessionId: SID } } })
  assert.ok(listed.some((r) => r.id === statusId), 'the status is listed')

  // A views it: the viewers list has A, and the socket hears status-viewers-added
  await s.emu.sendView(platformMessageId, { viewer: A, type: 'read', via: 'pn' })
  const added = await events.latest('status-viewers-added', (e) => e.statusId === statusId, 10_000)
  assert.deepEqual(added.viewers.map((v) => v.number), [A])
  assert.equal(added.viewerCount, 1)
  assert.equal(added.sessionId, SID)
  const viewers = await st.GET('/api/sessions/{sessionId}/status-viewers/{statusId}', { params: { path: { sessionId: SID, statusId } } })
  assert.deepEqual(viewers.map((v) => [v.number, v.isReal]), [[A, true]])
  assert.equal(viewers[0].viewedAt, added.viewers[0].viewedAt)
})

test('a refused call rejects with a StatusTrackerError (the status code and the service\'s message); a Blob field uploads as multipart', async (t) => {
  const { listen: serve } = await build(t)
  const baseUrl = await serve()
  const st = createClient({ baseUrl, apiKey: TEST_API_KEY, auth: 'bearer' })

  // bad input: 400 naming the field
  const bad = await st.POST('/api/sessions', { body: { sessionId: 'no spaces allowed', sessionName: 'x', authMethod: 'qrcode' } }).then(() => null, (err: unknown) => err)
  assert.ok(bad instanceof StatusTrackerError, `a StatusTrackerError, not ${String(bad)}`)
  assert.equal(bad.status, 400)
  assert.match(bad.message, /sessionId/)
  assert.deepEqual(bad.body, { success: false, error: bad.message })
  assert.ok(bad.headers.get('x-request-id'), 'the answer\'s headers come along')

  // not found, and a wrong key
  const missing = await st.GET('/api/sessions/{sessionId}/sent-statuses', { params: { path: { sessionId: 'nobody' } } }).then(() => null, (err: unknown) => err)
  assert.ok(missing instanceof StatusTrackerError)
  assert.deepEqual([missing.status, missing.message], [404, 'Session not found'])
  const stranger = createClient({ baseUrl, apiKey: 'not-the-key-0123456789' })
  const refused = await stranger.GET('/api/sessions').then(() => null, (err: unknown) => err)
  assert.ok(refused instanceof StatusTrackerError)
  assert.deepEqual([refused.status, refused.message], [401, 'Unauthorized'])

  // the same key as Bearer works, and a success is the envelope's data
  assert.deepEqual(await st.GET('/api/sessions'), [])

  // an upload: a Blob field goes as multipart/form-data; a file that is no image is refused
  const image = png()
  const uploaded = await st.POST('/api/upload-image', { body: { image: new File([new Uint8Array(image)], 'dot.png', { type: 'image/png' }) } })
  assert.match(uploaded.filename, /dot\.png$/)
  assert.deepEqual([uploaded.size, uploaded.mimeType], [image.length, 'image/png'])
  const notImage = await st.POST('/api/upload-image', { body: { image: new Blob(['plain text'], { type: 'image/png' }) } }).then(() => null, (err: unknown) => err)
  assert.ok(notImage instanceof StatusTrackerError)
  assert.deepEqual([notImage.status, notImage.message], [400, 'Only image and video files are allowed'])
})
