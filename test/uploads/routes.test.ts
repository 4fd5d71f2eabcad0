import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { request } from 'node:http'
import { dirname, join } from 'node:path'
import { build, TEST_API_KEY, waitFor } from '../helper.js'
import { assertNothingStored, filesIn, form, jpeg, local, mp4, png, uploadRows } from './fixtures.js'

const STORED = /^[0-9]{13}-[0-9a-f]{12}-[A-Za-z0-9._-]+$/

test('an image upload answers both response forms and stores the file and its row', async (t) => {
  const { api, app } = await build(t)
  for (const [data, type, name, mimeType, ext] of [
    [png(), 'image/png', 'holiday photo.png', 'image/png', '.png'],
    [jpeg(), 'image/jpeg', 'me.JPEG', 'image/jpeg', '.jpeg']
  ] as const) {
    const res = await api({ method: 'POST', url: '/api/upload-image', ...form({ field: 'image', filename: name, type, data }) })
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    assert.equal(body.success, true)
    assert.equal(body.filename, body.data.filename)
    assert.deepEqual(body.data, { filename: body.filename, size: data.length, mimeType })
    assert.match(body.filename, STORED)
    assert.ok(body.filename.endsWith(ext), body.filename)

    const path = local(app).resolve(body.filename)
    assert.equal(path, join(app.config.uploadDir, body.filename))
    assert.deepEqual(readFileSync(path), data)
    const row = (await uploadRows(app)).find((r) => r.filename === body.filename)
    assert.deepEqual(row, { filename: body.filename, kind: 'image', mime_type: mimeType, size: data.length })
  }
  assert.equal(filesIn(app.config.uploadDir).length, 2)
  assert.ok(filesIn(app.config.uploadDir).every((f) => !f.endsWith('.part')))
})

test('a video upload stores an MP4 under its sniffed type, fields before the file are ignored', async (t) => {
  const { api, app } = await build(t)
  const data = mp4(4096)
  const res = await api({
    method: 'POST',
    url: '/api/upload-video',
    ...form({ field: 'caption', value: 'ignored' }, { field: 'video', filename: 'clip', type: 'video/mp4', data })
  })
  assert.equal(res.statusCode, 200, res.body)
  const body = res.json()
  assert.equal(body.success, true)
  assert.equal(body.data.filename, body.filename)
  assert.equal(body.data.mimeType, 'video/mp4')
  assert.equal(body.data.size, data.length)
  assert.match(body.filename, /-clip\.mp4$/, 'missing extension is added from the content')
  assert.deepEqual(readFileSync(join(app.config.uploadDir, body.filename)), data)
  assert.deepEqual(await uploadRows(app), [{ filename: body.filename, kind: 'video', mime_type: 'video/mp4', size: data.length }])
})

test('the Bearer header form is accepted and a missing key stores nothing', async (t) => {
  const { app } = await build(t)
  const ok = await app.inject({ method: 'POST', url: '/api/upload-image', ...withHeaders(form({ field: 'image', filename: 'a.png', type: 'image/png', data: png() }), { authorization: `Bearer ${TEST_API_KEY}` }) })
  assert.equal(ok.statusCode, 200, ok.body)
  const { uploadDir } = app.config
  const before = filesIn(uploadDir)
  const denied = await app.inject({ method: 'POST', url: '/api/upload-image', ...form({ field: 'image', filename: 'a.png', type: 'image/png', data: png() }) })
  assert.equal(denied.statusCode, 401)
  assert.deepEqual(denied.json(), { success: false, error: 'Unauthorized' })
  assert.deepEqual(filesIn(uploadDir), before)
})

test('a wrong declared type or content is refused with 400 and leaves nothing behind', async (t) => {
  const { api, app } = await build(t)
  const cases: Array<[string, string, string, string, Buffer]> = [
    ['PNG declared as a video', '/api/upload-video', 'video', 'video/mp4', png()],
    ['PNG declared as an image on the video route', '/api/upload-video', 'video', 'image/png', png()],
    ['text declared as image/png', '/api/upload-image', 'image', 'image/png', Buffer.from('hello, I am not a picture\n'.repeat(40))],
    ['MP4 declared as image/jpeg', '/api/upload-image', 'image', 'image/jpeg', mp4()],
    ['PNG declared as text/plain', '/api/upload-image', 'image', 'text/plain', png()],
    ['MP4 declared as application/octet-stream', '/api/upload-video', 'video', 'application/octet-stream', mp4()],
    ['M4A audio declared as video/mp4', '/api/upload-video', 'video', 'video/mp4', mp4(64, 'M4A ', ['M4A ', 'isom'])],
    ['a short file', '/api/upload-image', 'image', 'image/png', Buffer.from([0x89, 0x50, 0x4e])]
  ]
  for (const [what, url, field, type, data] of cases) {
    const res = await api({ method: 'POST', url, ...form({ field, filename: 'x.png', type, data }) })
    assert.equal(res.statusCode, 400, what)
    assert.deepEqual(res.json(), { success: false, error: 'Only image and video files are allowed' }, what)
    await assertNothingStored(app, what)
  }
})

test('a wrong type is refused even when it is larger than the sniffing window', async (t) => {
  const { api, app } = await build(t)
  const data = Buffer.concat([Buffer.from('GIF87', 'latin1'), Buffer.alloc(300_000, 0x41)])
  const res = await api({ method: 'POST', url: '/api/upload-image', ...form({ field: 'image', filename: 'big.gif', type: 'image/gif', data }) })
  assert.equal(res.statusCode, 400)
  assert.equal(res.json().error, 'Only image and video files are allowed')
  await assertNothingStored(app)
})

test('over MAX_UPLOAD_MB answers 413 with the image and the video message', async (t) => {
  const { api, app } = await build(t, { MAX_UPLOAD_MB: '1' })
  const overImage = Buffer.concat([png(), Buffer.alloc(1024 * 1024, 0x22)])
  const image = await api({ method: 'POST', url: '/api/upload-image', ...form({ field: 'image', filename: 'big.png', type: 'image/png', data: overImage }) })
  assert.equal(image.statusCode, 413)
  assert.deepEqual(image.json(), { success: false, error: 'File too large' })
  await assertNothingStored(app, 'after the image')

  const video = await api({ method: 'POST', url: '/api/upload-video', ...form({ field: 'video', filename: 'big.mp4', type: 'video/mp4', data: mp4(1024 * 1024) }) })
  assert.equal(video.statusCode, 413)
  assert.deepEqual(video.json(), { success: false, error: 'File size exceeds 1MB limit' })
  await assertNothingStored(app, 'after the video')

  // exactly at the limit is still accepted
  const exact = Buffer.concat([png(), Buffer.alloc(1024 * 1024 - png().length, 0x22)])
  const fits = await api({ method: 'POST', url: '/api/upload-image', ...form({ field: 'image', filename: 'fits.png', type: 'image/png', data: exact }) })
  assert.equal(fits.statusCode, 200, fits.body)
  assert.equal(fits.json().data.size, 1024 * 1024)
})

test('no file, a wrong field name or a non-multipart body answer 400 No file uploaded', async (t) => {
  const { api, app } = await build(t)
  const noFile = { success: false, error: 'No file uploaded' }
  const cases: Array<[string, Parameters<typeof api>[0]]> = [
    ['no body at all', { method: 'POST', url: '/api/upload-image' }],
    ['an empty multipart body', { method: 'POST', url: '/api/upload-image', headers: { 'content-type': 'multipart/form-data; boundary=abc' }, payload: '' }],
    ['multipart without a boundary', { method: 'POST', url: '/api/upload-image', headers: { 'content-type': 'multipart/form-data' }, payload: 'x' }],
    ['only text fields', { method: 'POST', url: '/api/upload-image', ...form({ field: 'image', value: 'not a file' }) }],
    ['the file under another field name', { method: 'POST', url: '/api/upload-image', ...form({ field: 'file', filename: 'a.png', type: 'image/png', data: png() }) }],
    ['the image field on the video route', { method: 'POST', url: '/api/upload-video', ...form({ field: 'image', filename: 'a.mp4', type: 'video/mp4', data: mp4() }) }],
    ['a browser form with no file chosen', { method: 'POST', url: '/api/upload-image', ...form({ field: 'image', filename: '', type: 'application/octet-stream', data: Buffer.alloc(0) }) }],
    ['an empty file', { method: 'POST', url: '/api/upload-image', ...form({ field: 'image', filename: 'a.png', type: 'image/png', data: Buffer.alloc(0) }) }],
    ['a JSON body', { method: 'POST', url: '/api/upload-video', headers: { 'content-type': 'application/json' }, payload: '{"video":"x"}' }],
    ['malformed JSON', { method: 'POST', url: '/api/upload-video', headers: { 'content-type': 'application/json' }, payload: '{"video"' }],
    ['raw bytes', { method: 'POST', url: '/api/upload-image', headers: { 'content-type': 'image/png' }, payload: png() }]
  ]
  for (const [what, opts] of cases) {
    const res = await api(opts)
    assert.equal(res.statusCode, 400, `${what}: ${res.body}`)
    assert.deepEqual(res.json(), noFile, what)
    await assertNothingStored(app, what)
  }
})

test('path traversal in the original filename stays inside UPLOAD_DIR', async (t) => {
  const { api, app } = await build(t)
  const names = ['../../etc/passwd.png', '..\\..\\windows\\win.ini', '/etc/shadow', '....//x.png', '.hidden', 'a\u0000b.png', 'ünïcødé naïve.png', 'x'.repeat(400) + '.png']
  for (const name of names) {
    const res = await api({ method: 'POST', url: '/api/upload-image', ...form({ field: 'image', filename: name, type: 'image/png', data: png() }) })
    assert.equal(res.statusCode, 200, `${name}: ${res.body}`)
    const stored: string = res.json().filename
    assert.match(stored, STORED, name)
    assert.ok(!stored.includes('..') && stored.length <= 140, stored)
    assert.ok(stored.endsWith('.png'), stored)
    const path = local(app).resolve(stored)
    assert.ok(path !== null, stored)
    assert.equal(dirname(path), app.config.uploadDir)
  }
  const stored = filesIn(app.config.uploadDir)
  assert.equal(stored.length, names.length)
  assert.ok(stored.some((f) => f.endsWith('-passwd.png')))
  assert.ok(stored.some((f) => f.endsWith('-win.png')))
  assert.ok(stored.some((f) => f.endsWith('-hidden.png')))
  assert.equal(filesIn(dirname(app.config.uploadDir)).sort().join(','), 'data,uploads', 'nothing written next to the upload folder')
})

test('an upload aborted mid-body leaves no file and no row, and the server keeps working', async (t) => {
  const { app, listen } = await build(t)
  const base = new URL(await listen())
  const boundary = 'st-abort'
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="video"; filename="long.mp4"\r\nContent-Type: video/mp4\r\n\r\n`)
  const req = request({
    host: base.hostname,
    port: base.port,
    method: 'POST',
    path: '/api/upload-video',
    headers: { 'x-api-key': TEST_API_KEY, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + 4 * 1024 * 1024) }
  })
  req.on('error', () => {})
  req.write(Buffer.concat([head, mp4(256 * 1024)]))

  // the upload is really under way: its temporary file exists
  await waitFor(() => filesIn(app.config.uploadDir).some((f) => f.endsWith('.part')), 5000, 'a .part file')
  req.destroy()

  await waitFor(() => filesIn(app.config.uploadDir).length === 0, 5000, 'the .part file to be removed')
  await assertNothingStored(app)

  const res = await fetch(new URL('/api/upload-image', base), {
    method: 'POST',
    headers: { 'x-api-key': TEST_API_KEY },
    body: formData('image', png(), 'image/png', 'after.png')
  })
  assert.equal(res.status, 200)
  const body = await res.json() as { filename: string }
  assert.deepEqual(filesIn(app.config.uploadDir), [body.filename])
})

test('a real HTTP upload with FormData works end to end', async (t) => {
  const { app, listen } = await build(t)
  const base = await listen()
  const data = mp4(200_000)
  const res = await fetch(`${base}/api/upload-video`, { method: 'POST', headers: { 'x-api-key': TEST_API_KEY }, body: formData('video', data, 'video/mp4', 'film.mp4') })
  assert.equal(res.status, 200)
  const body = await res.json() as { success: boolean, filename: string, data: { size: number } }
  assert.equal(body.success, true)
  assert.equal(body.data.size, data.length)
  assert.deepEqual(readFileSync(join(app.config.uploadDir, body.filename)), data)
})

test('the OpenAPI document describes both multipart bodies and every answer', async (t) => {
  const { app } = await build(t)
  const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
  for (const kind of ['image', 'video']) {
    const op = doc.paths[`/api/upload-${kind}`].post
    assert.deepEqual(op.tags, ['uploads'])
    assert.equal(typeof op.summary, 'string')
    const schema = op.requestBody.content['multipart/form-data'].schema
    assert.deepEqual(schema.required, [kind])
    assert.equal(schema.properties[kind].type, 'string')
    assert.equal(schema.properties[kind].format, 'binary')
    for (const code of ['200', '400', '401', '413', '429', '500']) assert.ok(op.responses[code] !== undefined, `${kind} ${code}`)
    assert.deepEqual(op.responses['413'].content['application/json'].schema, { $ref: '#/components/schemas/ErrorEnvelope' })
    assert.deepEqual(op.responses['200'].content['application/json'].schema.required, ['success', 'filename', 'data'])
  }
})

function formData (field: string, data: Buffer, type: string, filename: string): FormData {
  const fd = new FormData()
  fd.append(field, new Blob([new Uint8Array(data)], { type }), filename)
  return fd
}

function withHeaders<T extends { headers: Record<string, string> }> (f: T, headers: Record<string, string>): T {
  return { ...f, headers: { ...f.headers, ...headers } }
}
