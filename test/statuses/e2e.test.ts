import assert from 'node:assert/strict'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { form, jpeg, mp4, png } from '../uploads/fixtures.js'
import { waitFor } from '../helper.js'
import { mediaTrusted, serveFiles, startStack, type Stack } from '../stack.js'
import { insertSession } from '../support/sessions.js'

// Statuses through the HTTP API, real Baileys and the emulator, events through a real socket.io client.

const OWN = '4915100000001'
const A = '4915100000011'
const B = '4915100000012'
const C = '4915100000013'
const SID = 'main'

interface Sent { statusId: string, platformMessageId: string, contactCount: number, message: string }

async function send (s: Stack, body: Record<string, unknown>, sessionId = SID): Promise<Sent> {
  const res = await s.api({ method: 'POST', url: `/api/sessions/${sessionId}/send-status`, payload: body })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: Sent }>().data
}

async function failure (s: Stack, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown): Promise<{ status: number, error: string }> {
  const res = await s.api({ method, url, ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}) })
  const body = res.json<{ success: boolean, error: string }>()
  assert.equal(body.success, false, res.body)
  return { status: res.statusCode, error: body.error }
}

async function upload (s: Stack, kind: 'image' | 'video', filename: string, type: string, data: Buffer): Promise<string> {
  const { payload, headers } = form({ field: kind, filename, type, data })
  const res = await s.api({ method: 'POST', url: `/api/upload-${kind}`, payload, headers })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ filename: string }>().filename
}

test('statuses end to end: real Baileys against the emulator', { timeout: 90_000 }, async (t) => {
  // the url statuses below are served from loopback: private addresses allowed in this test only
  const s = await startStack(t, { ALLOW_PRIVATE_URLS: 'true' })
  await s.link(SID, OWN)
  const viewersOf = async (statusId: string) => {
    const res = await s.api({ method: 'GET', url: `/api/sessions/${SID}/status-viewers/${statusId}` })
    assert.equal(res.statusCode, 200, res.body)
    return res.json<{ data: Array<{ jid: string, number: string | null, viewedAt: string, isReal: boolean }> }>().data
  }
  const listed = async () => {
    const res = await s.api({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })
    assert.equal(res.statusCode, 200, res.body)
    type Listed = { id: string, type: string, content: string, viewerCount: number, error: string | null, targetNumbers: string, contactCount: number }
    return res.json<{ data: Listed[] }>().data
  }

  let text!: Sent
  await t.test('text with colour and font reaches each recipient once; status-sent carries statusId and id', async () => {
    text = await send(s, { type: 'text', content: 'Hello from the tracker', backgroundColor: '#123456', font: 2, caption: 'ignored', targetNumbers: `${A}, ${B},${C},${A},${OWN}` })
    assert.equal(text.contactCount, 3)
    const record = await s.emu.waitForStatus((r) => r.id === text.platformMessageId && r.decrypted, 10_000)
    assert.equal(record.type, 'text')
    assert.equal(record.text, 'Hello from the tracker')
    assert.equal(record.backgroundArgb, 0xff123456)
    assert.equal(record.font, 2)
    assert.deepEqual([...record.recipients].sort(), [OWN, A, B, C].sort())
    assert.deepEqual(record.duplicateRecipients, [])
    assert.deepEqual(record.errors, [])
    const ev = await s.events.next('status-sent', (p) => p.statusId === text.statusId)
    assert.equal(ev.id, text.statusId)
    assert.equal(ev.sessionId, SID)
    assert.equal(ev.platformMessageId, text.platformMessageId)
    assert.equal(ev.caption, '')
    const row = (await listed()).find((r) => r.id === text.statusId)
    assert.deepEqual(
      row && { type: row.type, contactCount: row.contactCount, viewerCount: row.viewerCount, error: row.error, targetNumbers: row.targetNumbers },
      { type: 'text', contactCount: 3, viewerCount: 0, error: null, targetNumbers: `${A},${B},${C},${OWN}` })
  })

  let imageFile = ''
  let image!: Sent
  await t.test('image and video from uploads: one verified media upload each, with caption', { skip: !mediaTrusted() && 'needs NODE_EXTRA_CA_CERTS=test/.certs/cert.pem (npm test sets it)' }, async () => {
    imageFile = await upload(s, 'image', 'holiday.jpg', 'image/jpeg', jpeg())
    image = await send(s, { type: 'image', content: imageFile, caption: 'beach', targetNumbers: A })
    const videoFile = await upload(s, 'video', 'clip.mp4', 'video/mp4', mp4(4096))
    const video = await send(s, { type: 'video', content: videoFile, caption: 'waves', targetNumbers: `${A},${B}` })
    for (const [sent, type, caption, mimetype] of [[image, 'image', 'beach', 'image/jpeg'], [video, 'video', 'waves', 'video/mp4']] as const) {
      const r = await s.emu.waitForStatus((x) => x.id === sent.platformMessageId && x.decrypted, 10_000)
      assert.equal(r.type, type)
      assert.equal(r.caption, caption)
      assert.equal(r.media?.mimetype, mimetype)
      assert.equal(r.media?.uploaded, true)
      assert.equal(r.media?.verified, true)
    }
  })

  await t.test('url statuses: image and video by extension fetched by the server and sent, anything else as text', { skip: !mediaTrusted() && 'needs NODE_EXTRA_CA_CERTS' }, async (tt) => {
    const web = await serveFiles(tt, {
      '/shots/Pic.PNG': { type: 'image/png', body: png() },
      '/media/clip.mp4': { type: 'video/mp4', body: mp4(2048) },
      '/article': { type: 'text/html', body: '<h1>news</h1>' }
    })
    const before = new Set(readdirSync(s.config.uploadDir))
    const img = await send(s, { type: 'url', content: web.url('/shots/Pic.PNG?size=big'), caption: 'from the web', targetNumbers: A })
    const vid = await send(s, { type: 'url', content: web.url('/media/clip.mp4'), targetNumbers: A })
    const page = await send(s, { type: 'url', content: web.url('/article'), caption: 'read this', targetNumbers: A })
    const ri = await s.emu.waitForStatus((x) => x.id === img.platformMessageId && x.decrypted, 10_000)
    assert.equal(ri.type, 'image')
    assert.equal(ri.caption, 'from the web')
    assert.equal(ri.media?.verified, true)
    assert.equal(ri.media?.mimetype, 'image/png')
    const rv = await s.emu.waitForStatus((x) => x.id === vid.platformMessageId && x.decrypted, 10_000)
    assert.equal(rv.type, 'video')
    assert.equal(rv.media?.verified, true)
    const rt = await s.emu.waitForStatus((x) => x.id === page.platformMessageId && x.decrypted, 10_000)
    assert.equal(rt.type, 'text')
    assert.equal(rt.text, `${web.url('/article')}\nread this`)
    assert.deepEqual(web.hits.filter((h) => h !== '/article').sort(), ['/media/clip.mp4', '/shots/Pic.PNG'])
    assert.deepEqual(new Set(readdirSync(s.config.uploadDir)), before, 'no local copy of URL media is kept')
    const rows = (await listed()).filter((r) => [img, vid, page].some((x) => x.statusId === r.id))
    assert.deepEqual(rows.map((r) => [r.type, r.content]).sort(), [img, vid, page].map((x, i) => ['url', [web.url('/shots/Pic.PNG?size=big'), web.url('/media/clip.mp4'), web.url('/article')][i]]).sort())
  })

  await t.test('1,000 recipients: chunks under one id, each recipient once, one media upload, progress events', { skip: !mediaTrusted() && 'needs NODE_EXTRA_CA_CERTS' }, async () => {
    const numbers = Array.from({ length: 1000 }, (_, i) => `3361${String(i).padStart(8, '0')}`)
    const uploadsBefore = s.emu.mediaUploads().length
    const file = await upload(s, 'image', 'crowd.png', 'image/png', png())
    const started = Date.now()
    const big = await send(s, { type: 'image', content: file, targetNumbers: numbers.join(',') })
    t.diagnostic(`1,000-recipient image status sent in ${Date.now() - started} ms`)
    assert.equal(big.contactCount, 1000)
    const r = await s.emu.waitForStatus((x) => x.id === big.platformMessageId && x.recipients.length === 1001, 30_000)
    assert.equal(r.chunks, Math.ceil(1001 / s.config.wa.statusChunkSize))
    assert.deepEqual(r.duplicateRecipients, [])
    assert.deepEqual(new Set(r.recipients), new Set([OWN, ...numbers]))
    assert.equal(s.emu.mediaUploads().length - uploadsBefore, 1)
    const progress = s.events.all('status-send-progress', (p) => p.statusId === big.statusId)
    assert.equal(progress.length, r.chunks)
    // socket.io payloads carry the event log's id (docs/events-log.md)
    const { eventId, ...last } = progress.at(-1) as typeof progress[number] & { eventId: number }
    assert.ok(Number.isInteger(eventId))
    assert.deepEqual(last, { sessionId: SID, statusId: big.statusId, sent: 1001, total: 1001 })
    assert.deepEqual(progress.map((p) => (p as { eventId?: number }).eventId), progress.map((p) => (p as { eventId?: number }).eventId).sort((a, b) => (a ?? 0) - (b ?? 0)), 'in eventId order')
  })

  await t.test('views by PN and LID, delivery not counted, own number isReal false; pushed as status-viewers-update', async () => {
    const ownLid = s.emu.getAccount(OWN).lid
    assert.ok(ownLid !== '')
    await s.emu.sendView(text.platformMessageId, { viewer: C, type: 'delivery' })
    await s.emu.sendView(text.platformMessageId, { viewer: A, type: 'read', via: 'pn' })
    await s.emu.sendView(text.platformMessageId, { viewer: B, type: 'played', via: 'lid' })
    await s.emu.sendView(text.platformMessageId, { viewer: OWN, type: 'read', via: 'pn' })
    const ev = await s.events.next('status-viewers-update', (p) => p.statusId === text.statusId && p.viewers.length === 3, 10_000)
    const viewers = await viewersOf(text.statusId)
    assert.deepEqual(ev.viewers, viewers)
    const byNumber = new Map(viewers.map((v) => [v.number, v]))
    assert.deepEqual([...byNumber.keys()].sort(), [OWN, A, B].sort(), 'C only had a delivery receipt')
    assert.equal(byNumber.get(B)?.jid, `${B}@s.whatsapp.net`, 'LID viewer mapped to its number')
    assert.equal(byNumber.get(A)?.isReal, true)
    assert.equal(byNumber.get(B)?.isReal, true)
    assert.equal(byNumber.get(OWN)?.isReal, false)
    for (const v of viewers) assert.ok(Math.abs(Date.parse(v.viewedAt) - Date.now()) < 60_000)
    // a second read by A later keeps the first time
    const firstA = byNumber.get(A)?.viewedAt
    await new Promise((resolve) => setTimeout(resolve, 1100))
    await s.emu.sendView(text.platformMessageId, { viewer: A, type: 'played', via: 'lid' })
    await s.emu.settled(5000)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const again = await viewersOf(text.statusId)
    assert.equal(again.length, 3)
    assert.equal(again.find((v) => v.number === A)?.viewedAt, firstA)
    assert.equal((await listed()).find((r) => r.id === text.statusId)?.viewerCount, 2)
  })

  await t.test('a view by a LID the client cannot map is kept with number null, and gets its number once the platform reveals it', async () => {
    // a contact the client never asked usync about: nothing maps its LID until the emulator reveals it
    const stranger = s.emu.addContact({ number: '4915100000099' })
    const lidJid = `${stranger.lid}@lid`
    const totalViewers = async (): Promise<number> => (await s.api({ method: 'GET', url: '/api/stats' })).json<{ data: { totalViewers: number } }>().data.totalViewers
    const before = await totalViewers()
    await s.emu.sendView(text.platformMessageId, { viewer: stranger.number, type: 'read', via: 'lid', force: true })
    const ev = await s.events.next('status-viewers-update', (p) => p.statusId === text.statusId && p.viewers.some((v) => v.jid === lidJid), 10_000)
    const stored = (await viewersOf(text.statusId)).find((v) => v.jid === lidJid)
    assert.deepEqual(ev.viewers.find((v) => v.jid === lidJid), stored)
    assert.equal(stored?.number, null)
    assert.equal(stored?.isReal, true)
    assert.equal(await totalViewers(), before + 1, '/api/stats counts it')
    assert.equal((await listed()).find((r) => r.id === text.statusId)?.viewerCount, 3)

    s.emu.revealLid(stranger.number, { to: OWN })
    const mapped = await s.events.next('status-viewers-update', (p) => p.statusId === text.statusId && p.viewers.some((v) => v.number === stranger.number), 10_000)
    const viewers = await viewersOf(text.statusId)
    assert.deepEqual(mapped.viewers, viewers)
    assert.ok(!viewers.some((v) => v.number === null), 'no row left under the LID')
    const row = viewers.find((v) => v.number === stranger.number)
    assert.equal(row?.jid, `${stranger.number}@s.whatsapp.net`)
    assert.equal(row?.viewedAt, stored?.viewedAt, 'the view time is kept')
    assert.equal(await totalViewers(), before + 1)
  })

  await t.test('a status the platform refuses is not sent: the error answer names the code, statuses-updated send-failed, nothing listed', async () => {
    s.emu.fault(OWN, 'reject-next-status')
    const before = (await listed()).length
    const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content: 'this one bounces', targetNumbers: A } })
    assert.equal(res.statusCode, 500, res.body)
    assert.match(res.json<{ error: string }>().error, /refused status chunk 1\/1 \(error 479\)/)
    const ev = await s.events.next('statuses-updated', (p) => p.action === 'send-failed' && /error 479/.test(p.message ?? ''), 10_000)
    assert.equal(ev.sessionId, SID)
    assert.equal(s.emu.rejectedMessages().filter((m) => m.error === 479).length, 1)
    assert.equal((await listed()).length, before)
    // the next one goes through
    const fine = await send(s, { type: 'text', content: 'fine again', targetNumbers: A })
    await s.emu.waitForStatus((x) => x.id === fine.platformMessageId && x.decrypted, 10_000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal((await listed()).find((r) => r.id === fine.statusId)?.error, null)
  })

  await t.test('delete without revoke keeps the platform copy and removes the media file; with revoke reaches every recipient', async () => {
    if (image !== undefined) {
      const res = await s.api({ method: 'DELETE', url: `/api/sessions/${SID}/delete-status/${image.statusId}` })
      assert.equal(res.statusCode, 200, res.body)
      const d = res.json<{ data: { deletedFromPlatform: boolean, deletedFromDatabase: boolean, deletedImageFile: boolean, note: string } }>().data
      assert.deepEqual([d.deletedFromPlatform, d.deletedFromDatabase, d.deletedImageFile], [false, true, true])
      assert.match(d.note, /24 hours/)
      assert.ok(!existsSync(join(s.config.uploadDir, imageFile)))
      assert.notEqual(s.emu.status(image.platformMessageId).revoked, true)
    }
    const res = await s.api({ method: 'DELETE', url: `/api/sessions/${SID}/delete-status/${text.statusId}?revoke=true` })
    assert.equal(res.statusCode, 200, res.body)
    const d = res.json<{ data: { statusId: string, deletedFromPlatform: boolean, deletedFromDatabase: boolean, deletedImageFile: boolean } }>().data
    assert.deepEqual(d, { ...d, statusId: text.statusId, deletedFromPlatform: true, deletedFromDatabase: true, deletedImageFile: false })
    const r = await waitFor(() => { const x = s.emu.status(text.platformMessageId); return x.revoked === true && (x.revokedFor?.length ?? 0) >= 4 ? x : null }, 10_000, 'revoke in the emulator')
    assert.deepEqual([...(r.revokedFor ?? [])].sort(), [OWN, A, B, C].sort())
    await s.events.next('status-deleted', (p) => p.statusId === text.statusId)
    assert.equal((await failure(s, 'GET', `/api/sessions/${SID}/status-viewers/${text.statusId}`)).status, 404)
    assert.equal((await listed()).some((x) => x.id === text.statusId), false)
  })

  await t.test('bad input: unknown session 404, not connected 500, bad numbers 400, unknown upload 400, unknown status 404', async () => {
    assert.deepEqual(await failure(s, 'POST', '/api/sessions/nobody/send-status', { type: 'text', content: 'x' }), { status: 404, error: 'Session not found' })
    assert.deepEqual(await failure(s, 'GET', '/api/sessions/nobody/sent-statuses'), { status: 404, error: 'Session not found' })
    await insertSession(s.app, 'offline')
    assert.deepEqual(await failure(s, 'POST', '/api/sessions/offline/send-status', { type: 'text', content: 'x' }), { status: 500, error: 'WhatsApp is not connected' })
    const bad = await failure(s, 'POST', `/api/sessions/${SID}/send-status`, { type: 'text', content: 'x', targetNumbers: `${A},+4915100000099` })
    assert.equal(bad.status, 400)
    assert.match(bad.error, /"\+4915100000099"/)
    assert.deepEqual(await failure(s, 'POST', `/api/sessions/${SID}/send-status`, { type: 'image', content: '1700000000000-0123456789ab-nothing.jpg' }), { status: 400, error: 'Uploaded file not found' })
    assert.deepEqual(await failure(s, 'POST', `/api/sessions/${SID}/send-status`, { type: 'video', content: '../data/status-tracker.db' }), { status: 400, error: 'Uploaded file not found' })
    assert.equal((await failure(s, 'POST', `/api/sessions/${SID}/send-status`, { type: 'gif', content: 'x' })).status, 400)
    assert.equal((await failure(s, 'POST', `/api/sessions/${SID}/send-status`, { type: 'text', content: 'x', colour: 'red' })).status, 400)
    assert.equal((await failure(s, 'POST', `/api/sessions/${SID}/send-status`, { type: 'url', content: 'not a url' })).status, 400)
    assert.deepEqual(await failure(s, 'GET', `/api/sessions/${SID}/status-viewers/999999`), { status: 404, error: 'Status not found' })
    assert.deepEqual(await failure(s, 'DELETE', `/api/sessions/${SID}/delete-status/999999`), { status: 404, error: 'Status not found' })
    assert.equal((await failure(s, 'GET', `/api/sessions/${SID}/status-viewers/abc`)).status, 400)
    const noKey = await s.app.inject({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })
    assert.equal(noKey.statusCode, 401)
  })
})
