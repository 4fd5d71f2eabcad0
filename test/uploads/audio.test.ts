import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { audioDuration, audioFileDetails } from '../../src/media/audio.js'
import { detectUrlMedia } from '../../plugins/send-status/parse.js'
import { build } from '../helper.js'
import { harness } from '../statuses/harness.js'
import { serveFiles } from '../stack.js'
import { assertNothingStored, form, png, toneMp3, uploadRows, voiceOgg, wav } from './fixtures.js'
import { insertSession } from '../support/sessions.js'
import { dbOf } from '../support/db.js'

// Audio statuses (issue 31): the files' types and durations, POST /api/upload-audio, and what send-status
// hands the platform for them (through the fake platform; the emulator test is test/statuses/audio-e2e.test.ts).

const WRONG_AUDIO = 'audio must be an audio file: OGG/Opus, MP3, M4A, AAC or WAV'

test('durations are read from real files: OGG/Opus, MP3 and WAV; a voice note is OGG/Opus only', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-audio-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const write = (name: string, data: Buffer) => { const path = join(dir, name); writeFileSync(path, data); return path }
  const ogg = write('voice.ogg', voiceOgg())
  const mp3 = write('tone.mp3', toneMp3())
  const wave = write('quiet.wav', wav(1.5))
  assert.ok(Math.abs((await audioDuration(ogg) ?? 0) - 3) < 0.05, 'OGG/Opus: 3 s')
  assert.ok(Math.abs((await audioDuration(mp3) ?? 0) - 2.088) < 0.05, 'MP3: 2.09 s')
  assert.equal(await audioDuration(wave), 1.5)
  assert.deepEqual(await audioFileDetails(ogg), { mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 3 })
  assert.deepEqual(await audioFileDetails(mp3), { mimetype: 'audio/mpeg', ptt: false, seconds: 2 })
  assert.deepEqual(await audioFileDetails(wave), { mimetype: 'audio/wav', ptt: false, seconds: 2 })
  // not audio, or audio-looking bytes without a playable stream
  assert.equal(await audioFileDetails(write('pic.png', png())), null)
  assert.equal(await audioFileDetails(write('fake.mp3', Buffer.concat([toneMp3().subarray(0, 4), Buffer.alloc(4000, 0x55)]))), null)
  assert.equal(await audioDuration(write('empty.ogg', Buffer.alloc(0))), null)
})

test('POST /api/upload-audio stores OGG/Opus, MP3 and WAV under their sniffed types and answers the duration', async (t) => {
  const { api, app } = await build(t)
  const cases = [
    { data: voiceOgg(), type: 'audio/ogg', name: 'note.opus', mimeType: 'audio/ogg; codecs=opus', ext: '.opus', seconds: 3 },
    { data: voiceOgg(), type: 'application/ogg', name: 'note', mimeType: 'audio/ogg; codecs=opus', ext: '.ogg', seconds: 3 },
    { data: toneMp3(), type: 'audio/mpeg', name: 'tone.mp3', mimeType: 'audio/mpeg', ext: '.mp3', seconds: 2 },
    { data: wav(1), type: 'audio/x-wav', name: 'beep.wav', mimeType: 'audio/wav', ext: '.wav', seconds: 1 }
  ]
  for (const c of cases) {
    const res = await api({ method: 'POST', url: '/api/upload-audio', ...form({ field: 'audio', filename: c.name, type: c.type, data: c.data }) })
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json<{ success: boolean, filename: string, data: Record<string, unknown> }>()
    assert.equal(body.success, true)
    assert.deepEqual(body.data, { filename: body.filename, size: c.data.length, mimeType: c.mimeType, seconds: c.seconds }, c.name)
    assert.ok(body.filename.endsWith(c.ext), body.filename)
    assert.deepEqual(readFileSync(join(app.config.uploadDir, body.filename)), c.data)
    const row = (await uploadRows(app)).find((r) => r.filename === body.filename)
    assert.deepEqual(row, { filename: body.filename, kind: 'audio', mime_type: c.mimeType, size: c.data.length })
  }
})

test('upload-audio refuses what is not audio with a 400 naming the field, and stores nothing', async (t) => {
  const { api, app } = await build(t)
  const refused: Array<[string, { field: string, filename: string, type: string, data: Buffer }, number, string]> = [
    ['a PNG declared as audio', { field: 'audio', filename: 'song.mp3', type: 'audio/mpeg', data: png() }, 400, WRONG_AUDIO],
    ['an MP3 declared as an image', { field: 'audio', filename: 'tone.mp3', type: 'image/png', data: toneMp3() }, 400, WRONG_AUDIO],
    ['an MP3 frame header over noise (no duration)', { field: 'audio', filename: 'x.mp3', type: 'audio/mpeg', data: Buffer.concat([toneMp3().subarray(0, 4), Buffer.alloc(4000, 0x55)]) }, 400, WRONG_AUDIO],
    ['text declared as audio', { field: 'audio', filename: 'a.ogg', type: 'audio/ogg', data: Buffer.from('not audio at all, just words\n'.repeat(20)) }, 400, WRONG_AUDIO],
    ['audio in another field', { field: 'image', filename: 'tone.mp3', type: 'audio/mpeg', data: toneMp3() }, 400, 'No file uploaded']
  ]
  for (const [what, part, status, error] of refused) {
    const res = await api({ method: 'POST', url: '/api/upload-audio', ...form(part) })
    assert.equal(res.statusCode, status, `${what}: ${res.body}`)
    assert.deepEqual(res.json(), { success: false, error }, what)
  }
  // the seed's uploads keep their answer: audio is neither an image nor a video
  const res = await api({ method: 'POST', url: '/api/upload-video', ...form({ field: 'video', filename: 'tone.mp3', type: 'video/mp4', data: toneMp3() }) })
  assert.deepEqual([res.statusCode, res.json()], [400, { success: false, error: 'Only image and video files are allowed' }])
  await assertNothingStored(app, 'after refused audio uploads')
})

test('url statuses ending in an audio extension are audio; the others stay as they were', () => {
  for (const [path, mimetype] of [['/a.mp3', 'audio/mpeg'], ['/b.M4A', 'audio/mp4'], ['/c.ogg', 'audio/ogg; codecs=opus'], ['/d.opus?x=1', 'audio/ogg; codecs=opus'],
    ['/e.wav', 'audio/wav'], ['/f.aac#t=1', 'audio/aac']]) {
    assert.deepEqual(detectUrlMedia(new URL(`https://example.com${path}`)), { kind: 'audio', mimetype }, path)
  }
  assert.deepEqual(detectUrlMedia(new URL('https://example.com/v.mp4')), { kind: 'video', mimetype: 'video/mp4' })
  assert.equal(detectUrlMedia(new URL('https://example.com/song.flac')), null, 'FLAC: not a type we send, so a text status')
})

/** Writes `data` as a stored upload with its row, as POST /api/upload-audio leaves one. */
async function storeUpload (h: Awaited<ReturnType<typeof harness>>, name: string, kind: 'audio' | 'image', mime: string, data: Buffer): Promise<string> {
  const filename = `${Date.now()}-0123456789ab-${name}`
  writeFileSync(join(h.uploadDir, filename), data)
  await dbOf(h.app).db.insertInto('uploads').values({ filename, kind, mime_type: mime, size: data.length, created_at: Date.now() }).execute()
  return filename
}

test('send-status type audio: OGG/Opus goes to the platform as a voice note, MP3 as audio, with the duration; no caption', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  const ogg = await storeUpload(h, 'note.ogg', 'audio', 'audio/ogg; codecs=opus', voiceOgg())
  const mp3 = await storeUpload(h, 'tone.mp3', 'audio', 'audio/mpeg', toneMp3())
  const voice = await h.app.statuses.send('s1', { type: 'audio', content: ogg, caption: 'not sent' })
  await h.app.statuses.send('s1', { type: 'audio', content: mp3 })
  const [first, second] = h.platform.sent.map((s) => s.input.content)
  assert.deepEqual(first, { kind: 'audio', source: { path: join(h.uploadDir, ogg) }, mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 3 })
  assert.deepEqual(second, { kind: 'audio', source: { path: join(h.uploadDir, mp3) }, mimetype: 'audio/mpeg', ptt: false, seconds: 2 })
  const row = await dbOf(h.app).db.selectFrom('statuses').selectAll().where('id', '=', Number(voice.statusId)).executeTakeFirstOrThrow()
  assert.deepEqual([row.type, row.content, row.caption, row.media_file], ['audio', ogg, '', ogg])
  const [sent] = h.of('status-sent')
  assert.deepEqual([sent.type, sent.content, sent.caption], ['audio', ogg, ''])

  const image = await storeUpload(h, 'pic.png', 'image', 'image/png', png())
  await assert.rejects(h.app.statuses.send('s1', { type: 'audio', content: image }), /content is an uploaded image, not audio/)
  await assert.rejects(h.app.statuses.send('s1', { type: 'image', content: ogg }), /content is an uploaded audio, not an image/)
  await assert.rejects(h.app.statuses.send('s1', { type: 'audio', content: '1700000000000-0123456789ab-none.ogg' }), /Uploaded file not found/)
})

test('a url status ending in .mp3 is fetched and sent as audio with its duration; audio that is not is refused', async (t) => {
  // served from loopback: private addresses allowed in this test only
  const h = await harness(t, { ALLOW_PRIVATE_URLS: 'true' })
  await h.addSession('s1')
  const web = await serveFiles(t, {
    '/music/tone.mp3': { type: 'audio/mpeg', body: toneMp3() },
    '/voice/note.opus': { type: 'audio/ogg', body: voiceOgg() },
    '/fake.mp3': { type: 'audio/mpeg', body: png() }
  })
  const res = await h.app.statuses.send('s1', { type: 'url', content: web.url('/music/tone.mp3'), caption: 'not on audio' })
  const voice = await h.app.statuses.send('s1', { type: 'url', content: web.url('/voice/note.opus') })
  const [mp3, opus] = h.platform.sent.map((s) => s.input.content)
  assert.equal(mp3?.kind, 'audio')
  assert.deepEqual(mp3 && { ...mp3, source: undefined }, { kind: 'audio', source: undefined, mimetype: 'audio/mpeg', ptt: false, seconds: 2 })
  assert.deepEqual(opus && { ...opus, source: undefined }, { kind: 'audio', source: undefined, mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 3 })
  const local = mp3 !== undefined && 'source' in mp3 && 'path' in mp3.source ? mp3.source.path : ''
  assert.ok(local !== '' && !existsSync(local), 'the local copy is removed after the send')
  const rows = await dbOf(h.app).db.selectFrom('statuses').select(['id', 'type', 'content', 'caption']).orderBy('id').execute()
  assert.deepEqual(rows.map((r) => [String(r.id), r.type, r.content, r.caption]), [
    [res.statusId, 'url', web.url('/music/tone.mp3'), ''],
    [voice.statusId, 'url', web.url('/voice/note.opus'), '']
  ])
  await assert.rejects(h.app.statuses.send('s1', { type: 'url', content: web.url('/fake.mp3') }), (err: Error & { statusCode?: number }) => {
    assert.equal(err.statusCode, 400)
    assert.match(err.message, /^URL refused: the content at the URL is not audio \(it is image\/png\)/)
    return true
  })
})

test('a schedule naming an uploaded audio file keeps it, and refuses one that was never uploaded', async (t) => {
  const { app, api } = await build(t)
  await insertSession(app, 'm1')
  const up = await api({ method: 'POST', url: '/api/upload-audio', ...form({ field: 'audio', filename: 'note.ogg', type: 'audio/ogg', data: voiceOgg() }) })
  assert.equal(up.statusCode, 200, up.body)
  const filename = up.json<{ filename: string }>().filename
  const at = new Date(Date.now() + 3_600_000).toISOString()
  const res = await api({ method: 'POST', url: '/api/sessions/m1/scheduled-statuses', payload: { status: { type: 'audio', content: filename }, at } })
  assert.equal(res.statusCode, 200, res.body)
  const row = await dbOf(app).db.selectFrom('schedules').select('media_file').executeTakeFirstOrThrow()
  assert.equal(row.media_file, filename, 'the schedule holds the upload, so the unused-uploads cleanup leaves it')
  const missing = await api({ method: 'POST', url: '/api/sessions/m1/scheduled-statuses', payload: { status: { type: 'audio', content: '1700000000000-0123456789ab-gone.ogg' }, at } })
  assert.equal(missing.statusCode, 400, missing.body)
  assert.match(missing.json<{ error: string }>().error, /uploaded file not found/)
})
