import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { StatusRecord } from '@status-tracker/emulator'
import { form, toneMp3, voiceOgg } from '../uploads/fixtures.js'
import { mediaTrusted, serveFiles, settledPost, startStack, type Stack } from '../stack.js'

// Audio statuses (issue 31) through the HTTP API, real Baileys and the emulator: the recipients decrypt an
// OGG/Opus upload as a voice note and an MP3 as audio (WA Web's audioMessage: whatsapp-rust src/media.rs
// audio_message; the skmsg's mediatype `ptt` or `audio`: wacore/src/send/classify.rs), views are recorded
// as for the other types, and a url status ending in .mp3 goes out as audio.

const OWN = '4915300000001'
const A = '4915300000011'
const B = '4915300000012'
const SID = 'voice'
/** a legacy (not LID-migrated) account, posting through Baileys' own relayMessage, and two contacts of its kind */
const LEGACY = '4915300000002'
const C = '4915300000021'
const D = '4915300000022'

interface Sent { statusId: string, platformMessageId: string, contactCount: number }

async function send (s: Stack, body: Record<string, unknown>, sessionId = SID): Promise<Sent> {
  const res = await s.api({ method: 'POST', url: `/api/sessions/${sessionId}/send-status`, payload: body })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: Sent }>().data
}

async function uploadAudio (s: Stack, filename: string, type: string, data: Buffer): Promise<string> {
  const res = await s.api({ method: 'POST', url: '/api/upload-audio', ...form({ field: 'audio', filename, type, data }) })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ filename: string }>().filename
}

/** Decrypted by the own phone and every recipient, verified, as a media stanza with `mediatype`. */
function assertAudio (record: StatusRecord, media: { mimetype: string, ptt: boolean, seconds: number, mediatype: string }, audience = [OWN, A, B]): void {
  assert.deepEqual(record.errors, [])
  assert.equal(record.rejected, undefined)
  assert.equal(record.type, 'audio')
  const m = record.media
  assert.deepEqual(m && { mimetype: m.mimetype, ptt: m.ptt, seconds: m.seconds, uploaded: m.uploaded, verified: m.verified },
    { mimetype: media.mimetype, ptt: media.ptt, seconds: media.seconds, uploaded: true, verified: true })
  for (const stanza of record.stanzas) {
    assert.equal(stanza.attrs.type, 'media')
    assert.equal(stanza.mediatype, media.mediatype)
  }
  assert.deepEqual([...record.recipients].sort(), [...audience].sort())
  for (const number of audience) assert.ok(record.deliveries.some((d) => d.number === number && d.decrypted), `${number} decrypted it`)
}

test('audio statuses through real Baileys: a voice note and an MP3, their viewers, a url .mp3', { timeout: 120_000, skip: !mediaTrusted() && 'needs NODE_EXTRA_CA_CERTS=test/.certs/cert.pem (npm test sets it)' }, async (t) => {
  // the url status below is served from loopback: private addresses allowed in this test only
  const s = await startStack(t, { ALLOW_PRIVATE_URLS: 'true' })
  await s.link(SID, OWN)

  let voice!: Sent
  await t.test('an OGG/Opus upload is decrypted by its recipients as a voice note (ptt, Opus mimetype, seconds)', async () => {
    const file = await uploadAudio(s, 'hello.ogg', 'audio/ogg', voiceOgg())
    voice = await send(s, { type: 'audio', content: file, targetNumbers: `${A},${B}` })
    assert.equal(voice.contactCount, 2)
    assertAudio(await settledPost(s, voice.platformMessageId), { mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 3, mediatype: 'ptt' })
    const ev = await s.events.next('status-sent', (p) => p.statusId === voice.statusId)
    assert.deepEqual([ev.type, ev.content, ev.caption], ['audio', file, ''])
  })

  await t.test('a publisher key (["read","send"], as docs/keys.md recommends) uploads audio and posts a voice status', async () => {
    const created = await s.api({ method: 'POST', url: '/api/keys', payload: { name: 'publisher', sessions: [SID], scopes: ['read', 'send'] } })
    assert.equal(created.statusCode, 200, created.body)
    const headers = { 'x-api-key': created.json<{ data: { key: string } }>().data.key }
    const body = form({ field: 'audio', filename: 'publisher.ogg', type: 'audio/ogg', data: voiceOgg() })
    const up = await s.app.inject({ method: 'POST', url: '/api/upload-audio', payload: body.payload, headers: { ...body.headers, ...headers } })
    assert.equal(up.statusCode, 200, up.body)
    const sent = await s.app.inject({ method: 'POST', url: `/api/sessions/${SID}/send-status`, headers, payload: { type: 'audio', content: up.json<{ filename: string }>().filename, targetNumbers: `${A},${B}` } })
    assert.equal(sent.statusCode, 200, sent.body)
    assertAudio(await settledPost(s, sent.json<{ data: Sent }>().data.platformMessageId), { mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 3, mediatype: 'ptt' })
  })

  await t.test('an MP3 upload is decrypted as audio, not a voice note', async () => {
    const file = await uploadAudio(s, 'tone.mp3', 'audio/mpeg', toneMp3())
    const mp3 = await send(s, { type: 'audio', content: file, targetNumbers: `${A},${B}` })
    assertAudio(await settledPost(s, mp3.platformMessageId), { mimetype: 'audio/mpeg', ptt: false, seconds: 2, mediatype: 'audio' })
  })

  await t.test('views of the voice note are recorded as for other types (PN and LID receipts, played counts)', async () => {
    await s.emu.sendView(voice.platformMessageId, { viewer: A, type: 'played', via: 'lid' })
    await s.emu.sendView(voice.platformMessageId, { viewer: B, type: 'read', via: 'pn' })
    await s.emu.sendView(voice.platformMessageId, { viewer: OWN, type: 'read', via: 'pn' })
    const ev = await s.events.next('status-viewers-update', (p) => p.statusId === voice.statusId && p.viewers.length === 3, 10_000)
    const res = await s.api({ method: 'GET', url: `/api/sessions/${SID}/status-viewers/${voice.statusId}` })
    assert.equal(res.statusCode, 200, res.body)
    const viewers = res.json<{ data: Array<{ jid: string, number: string, isReal: boolean }> }>().data
    assert.deepEqual(ev.viewers, viewers)
    assert.deepEqual(viewers.map((v) => [v.number, v.jid, v.isReal]).sort(), [[A, `${A}@s.whatsapp.net`, true], [B, `${B}@s.whatsapp.net`, true], [OWN, `${OWN}@s.whatsapp.net`, false]].sort())
    const list = await s.api({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })
    const row = list.json<{ data: Array<{ id: string, type: string, viewerCount: number }> }>().data.find((r) => r.id === voice.statusId)
    assert.deepEqual(row && [row.type, row.viewerCount], ['audio', 2])
  })

  await t.test('a legacy account posts a voice note through Baileys\' relayMessage: the same audio message and mediatype', async () => {
    s.emu.addContact({ number: C, legacy: true })
    s.emu.addContact({ number: D, legacy: true })
    await s.link('legacy', LEGACY, { legacy: true })
    const file = await uploadAudio(s, 'legacy.opus', 'audio/ogg', voiceOgg())
    const sent = await send(s, { type: 'audio', content: file, targetNumbers: `${C},${D}` }, 'legacy')
    assertAudio(await settledPost(s, sent.platformMessageId), { mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 3, mediatype: 'ptt' }, [LEGACY, C, D])
  })

  await t.test('a url status ending in .mp3, served from loopback, is sent as audio; the row keeps the URL', async (tt) => {
    const web = await serveFiles(tt, { '/podcast/episode.mp3': { type: 'audio/mpeg', body: toneMp3() } })
    const url = web.url('/podcast/episode.mp3')
    const sent = await send(s, { type: 'url', content: url, targetNumbers: `${A},${B}` })
    assertAudio(await settledPost(s, sent.platformMessageId), { mimetype: 'audio/mpeg', ptt: false, seconds: 2, mediatype: 'audio' })
    assert.deepEqual(web.hits, ['/podcast/episode.mp3'])
    const list = await s.api({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })
    const row = list.json<{ data: Array<{ id: string, type: string, content: string }> }>().data.find((r) => r.id === sent.statusId)
    assert.deepEqual(row && [row.type, row.content], ['url', url])
  })
})
