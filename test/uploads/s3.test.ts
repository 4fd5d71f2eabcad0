import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { startEmulator, testCertPaths } from '@status-tracker/emulator'
import { waitFor } from '../helper.js'
import { mediaTrusted, startStack, type Stack } from '../stack.js'
import { dialectEnv, dialectTest, postgresUrl } from '../support/db-matrix.js'
import { S3_SECRET, startS3, type PrivateS3 } from '../support/s3.js'
import { CLUSTER_KEY, nodeApi, ownership, planNode, startNode } from '../cluster/nodes.js'
import { filesIn, form, jpeg, toneMp3, uploadRows, voiceOgg, wav } from './fixtures.js'
import { dbOf } from '../support/db.js'

// MEDIA_STORE=s3 against a real S3 API server on loopback (test/support/s3.ts), through the real service:
// uploads become objects (a multipart one only once complete), a session posts one through real Baileys and
// the emulator decrypts the very bytes of the object, delete and expiry remove the objects, two nodes that
// share no folder share the media, and a SIGKILL in the middle of an upload leaves no object listed.

const OWN = '4915300000001'
const A = '4915300000011'
const MIB = 1024 * 1024

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('base64')

/** A JPEG (by its first bytes) of `size` bytes: big enough for a multipart upload, content checked by the head only. */
function bigJpeg (size: number): Buffer {
  const head = jpeg()
  return Buffer.concat([head, Buffer.alloc(size - head.length, 0x5a)])
}

function needMedia (): void {
  assert.ok(mediaTrusted(), 'run with NODE_EXTRA_CA_CERTS=test/.certs/cert.pem (npm test does): the emulator\'s media server speaks HTTPS')
}

async function startS3For (t: TestContext): Promise<PrivateS3> {
  const s3 = await startS3()
  t.after(async () => { await s3.stop() })
  return s3
}

async function upload (s: Stack, name: string, data: Buffer): Promise<{ status: number, filename: string, body: string }> {
  const { payload, headers } = form({ field: 'image', filename: name, type: 'image/jpeg', data })
  const res = await s.api({ method: 'POST', url: '/api/upload-image', payload, headers })
  return { status: res.statusCode, filename: res.statusCode === 200 ? res.json<{ filename: string }>().filename : '', body: res.body }
}

/** The files in a folder, the scratch copies (`.part`) included. */
const scratch = (dir: string): string[] => existsSync(dir) ? readdirSync(dir) : []

dialectTest('MEDIA_STORE=s3: an upload is an object, a session posts it, delete and expiry remove it, nothing is left', async (t, dialect) => {
  needMedia()
  const s3 = await startS3For(t)
  const s = await startStack(t, { ...await dialectEnv(dialect), ...s3.env, MAX_UPLOAD_MB: '8' })
  await s.link('main', OWN)
  const api = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) => {
    const res = await s.api({ method, url, ...(payload === undefined ? {} : { payload }) })
    assert.equal(res.statusCode, 200, res.body)
    return res.json<{ data: Record<string, unknown> }>().data
  }

  // the upload: one object under the stored name, the same bytes, nothing on this node's disk
  const data = jpeg()
  const photo = await upload(s, 'photo.jpg', data)
  assert.equal(photo.status, 200, photo.body)
  assert.deepEqual(await s3.keys(), [photo.filename])
  assert.deepEqual(await s3.read(photo.filename), data)
  assert.deepEqual(scratch(s.config.uploadDir), [], 'nothing kept on the local disk')
  assert.deepEqual((await api('GET', '/api/storage')).uploads, { count: 1, bytes: data.length, store: 's3', location: `s3://${s3.bucket}` })

  // posted from the session: the platform gets the object's bytes (the emulator decrypts and hashes them)
  const sent = await api('POST', '/api/sessions/main/send-status', { type: 'image', content: photo.filename, caption: 'from S3', targetNumbers: A })
  const record = await s.emu.waitForStatus((x) => x.id === sent.platformMessageId && x.decrypted, 15_000)
  assert.equal(record.media?.verified, true, JSON.stringify(record.errors))
  assert.equal(record.media?.sha256, sha256(data), 'the bytes of the object reached the platform')
  assert.deepEqual(scratch(s.config.uploadDir), [], 'the copy read for the send is removed')

  // an unknown name is refused before anything is sent
  const unknown = await s.api({ method: 'POST', url: '/api/sessions/main/send-status', payload: { type: 'image', content: '1700000000000-0123456789ab-none.jpg' } })
  assert.equal(unknown.statusCode, 400, unknown.body)

  // delete: the record and the object
  const deleted = await api('DELETE', `/api/sessions/main/delete-status/${String(sent.statusId)}`)
  assert.equal(deleted.deletedImageFile, true)
  assert.deepEqual(await s3.keys(), [])
  assert.deepEqual(await uploadRows(s.app), [])

  // larger than one part (5 MiB): a multipart upload, listed only once complete, whole
  const big = bigJpeg(6 * MIB)
  const large = await upload(s, 'large.jpg', big)
  assert.equal(large.status, 200, large.body)
  assert.ok(s3.requests.some((r) => r.method === 'POST' && r.path.endsWith(`/${large.filename}`) && /(^|&)uploads(=|&|$)/.test(r.query)), 'a multipart upload was started')
  assert.equal(sha256(await s3.read(large.filename)), sha256(big))

  // over MAX_UPLOAD_MB after the first part went out: 413, the multipart upload aborted on the server, nothing listed
  const before = s3.requests.length
  const tooLarge = await upload(s, 'too-large.jpg', bigJpeg(9 * MIB))
  assert.equal(tooLarge.status, 413, tooLarge.body)
  const calls = s3.requests.slice(before)
  assert.ok(calls.some((r) => r.method === 'PUT' && /partNumber=1/.test(r.query)), `a part was sent before the limit: ${JSON.stringify(calls)}`)
  assert.ok(calls.some((r) => r.method === 'DELETE' && /uploadId=/.test(r.query)), `AbortMultipartUpload was sent: ${JSON.stringify(calls)}`)
  assert.ok(!calls.some((r) => r.method === 'POST' && /uploadId=/.test(r.query)), 'never completed')
  assert.deepEqual(await s3.keys(), [large.filename])

  // expiry: a posted status and its object, an old unused upload, the large one: all gone after the TTL
  const used = await upload(s, 'expires.jpg', data)
  const unused = await upload(s, 'never-sent.jpg', data)
  const expiring = await api('POST', '/api/sessions/main/send-status', { type: 'image', content: used.filename, targetNumbers: A })
  await s.emu.waitForStatus((x) => x.id === expiring.platformMessageId && x.decrypted, 15_000)
  assert.deepEqual(await s3.keys(), [large.filename, used.filename, unused.filename].sort())
  const old = Date.now() - 25 * 3_600_000
  await dbOf(s.app).db.updateTable('statuses').set({ created_at: old }).execute()
  await dbOf(s.app).db.updateTable('uploads').set({ created_at: old }).execute()
  assert.deepEqual(await s.app.statuses.cleanup(), { statuses: 1, uploads: 3 })
  assert.deepEqual(await s3.keys(), [], 'no object left behind')
  assert.deepEqual(await uploadRows(s.app), [])
  assert.deepEqual(scratch(s.config.uploadDir), [])
})

dialectTest('MEDIA_STORE=s3: audio uploads get their duration before the row commits, refusals leave no object, a voice note is posted from the bucket', async (t, dialect) => {
  needMedia()
  const s3 = await startS3For(t)
  const s = await startStack(t, { ...await dialectEnv(dialect), ...s3.env })
  await s.link('main', OWN)
  const uploadAudio = async (filename: string, type: string, data: Buffer) => {
    const res = await s.api({ method: 'POST', url: '/api/upload-audio', ...form({ field: 'audio', filename, type, data }) })
    return { status: res.statusCode, body: res.body, data: res.statusCode === 200 ? res.json<{ data: { filename: string, seconds: number } }>().data : null }
  }

  // a voice note: the object holds its bytes, the answer its duration, the local copy it was read from is gone
  const ogg = voiceOgg()
  const voice = await uploadAudio('hello.ogg', 'application/ogg', ogg)
  assert.equal(voice.status, 200, voice.body)
  assert.equal(voice.data?.seconds, 3)
  const filename = voice.data?.filename ?? ''
  assert.deepEqual(await s3.keys(), [filename])
  assert.deepEqual(await s3.read(filename), ogg)
  assert.deepEqual(scratch(s.config.uploadDir), [], 'the copy the duration was read from is removed')

  // larger than one part: a multipart upload, its duration read from the whole copy (8000 bytes a second)
  const long = await uploadAudio('long.wav', 'audio/wav', wav(800))
  assert.equal(long.status, 200, long.body)
  assert.equal(long.data?.seconds, 800)
  assert.ok(s3.requests.some((r) => r.method === 'POST' && r.path.endsWith(`/${long.data?.filename ?? ''}`) && /(^|&)uploads(=|&|$)/.test(r.query)), 'a multipart upload was started')

  // audio-looking bytes without a duration: refused after the object completed, the object removed before any row
  const keys = await s3.keys()
  const noise = await uploadAudio('x.mp3', 'audio/mpeg', Buffer.concat([toneMp3().subarray(0, 4), Buffer.alloc(4000, 0x55)]))
  assert.equal(noise.status, 400, noise.body)
  assert.match(noise.body, /audio must be an audio file/)
  assert.deepEqual(await s3.keys(), keys, 'no object left by the refusal')
  assert.equal((await uploadRows(s.app)).length, 2)
  assert.deepEqual(scratch(s.config.uploadDir), [])

  // posted: the recipients decrypt the object's bytes as a voice note of 3 s; the send's copy is removed
  const res = await s.api({ method: 'POST', url: '/api/sessions/main/send-status', payload: { type: 'audio', content: filename, targetNumbers: A } })
  assert.equal(res.statusCode, 200, res.body)
  const sent = res.json<{ data: { statusId: string, platformMessageId: string } }>().data
  const record = await s.emu.waitForStatus((x) => x.id === sent.platformMessageId && x.decrypted, 15_000)
  assert.deepEqual(record.errors, [])
  assert.equal(record.type, 'audio')
  assert.deepEqual(record.media && [record.media.ptt, record.media.seconds, record.media.verified, record.media.sha256], [true, 3, true, sha256(ogg)])
  assert.deepEqual(scratch(s.config.uploadDir), [], 'the copy read for the send is removed')

  // deleted: the object goes with the status
  const deleted = await s.api({ method: 'DELETE', url: `/api/sessions/main/delete-status/${sent.statusId}` })
  assert.equal(deleted.statusCode, 200, deleted.body)
  assert.deepEqual(await s3.keys(), [long.data?.filename])
})

test('MEDIA_STORE=s3, two nodes on PostgreSQL with no shared folder: an image uploaded on one is posted by a session the other owns', { timeout: 240_000 }, async (t) => {
  needMedia()
  const s3 = await startS3For(t)
  const emu = await startEmulator({ tls: testCertPaths() })
  t.after(async () => { await emu.stop() })
  const dir = mkdtempSync(join(tmpdir(), 'st-s3-cluster-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  // UPLOAD_DIR unset: each node's own ./uploads under its own folder, shared with nobody
  const env = {
    DATABASE_URL: await postgresUrl(),
    ...s3.env,
    WA_WEBSOCKET_URL: emu.wsUrl,
    WA_TEST_TRUST_ROOT: emu.rootPublicKey,
    NODE_EXTRA_CA_CERTS: emu.caFile
  }
  const nodes = [await startNode(t, await planNode(dir, 'node-a'), env), await startNode(t, await planNode(dir, 'node-b'), env)]

  emu.createAccount(OWN)
  const viaA = nodeApi(nodes[0].base)
  await viaA.post('/sessions', { sessionId: 'shared', sessionName: 'shared', authMethod: 'qrcode' })
  const qr = await waitFor(async () => (await viaA.get<{ qrCode: string | null }>('/sessions/shared/qr-code')).qrCode, 30_000, 'the QR code')
  await emu.scan(OWN, qr)
  await waitFor(async () => (await viaA.get<{ connected: boolean }>('/sessions/shared/connection-status')).connected, 30_000, 'the session to connect')
  const owners = await ownership(nodes[0].base)
  const owner = nodes.find((n) => owners[n.nodeId]?.includes('shared'))
  const other = nodes.find((n) => n !== owner)
  assert.ok(owner !== undefined && other !== undefined, JSON.stringify(owners))
  t.diagnostic(`owner ${owner.nodeId}, upload and post through ${other.nodeId}`)

  // uploaded on the node that does not own the session
  const data = jpeg()
  const { payload, headers } = form({ field: 'image', filename: 'across.jpg', type: 'image/jpeg', data })
  const res = await fetch(`${other.base}/api/upload-image`, { method: 'POST', headers: { ...headers, 'x-api-key': CLUSTER_KEY }, body: new Uint8Array(payload) })
  assert.equal(res.status, 200, await res.clone().text())
  const { filename } = await res.json() as { filename: string }
  assert.deepEqual(await s3.keys(), [filename])
  for (const n of nodes) assert.deepEqual(scratch(join(dir, n.nodeId, 'uploads')), [], `no file in ${n.nodeId}'s folder`)

  // posted through the same node: forwarded to the owner, which reads the object
  const viaOther = nodeApi(other.base)
  const sent = await viaOther.post<{ statusId: string, platformMessageId: string }>('/sessions/shared/send-status', { type: 'image', content: filename, targetNumbers: A })
  const record = await emu.waitForStatus((x) => x.id === sent.platformMessageId && x.decrypted, 20_000)
  assert.equal(record.media?.verified, true, JSON.stringify(record.errors))
  assert.equal(record.media?.sha256, sha256(data))
  for (const n of nodes) assert.deepEqual(scratch(join(dir, n.nodeId, 'uploads')), [], `the send's copy on ${n.nodeId} is removed`)

  // deleted through the other node: no object left
  const deleted = await viaOther.call<{ deletedImageFile: boolean }>('DELETE', `/sessions/shared/delete-status/${sent.statusId}`)
  assert.equal(deleted.status, 200, deleted.body)
  assert.equal(deleted.data.deletedImageFile, true)
  assert.deepEqual(await s3.keys(), [], 'no object left behind')
  const storage = await viaOther.get<{ uploads: { count: number, store: string } }>('/storage')
  assert.deepEqual([storage.uploads.count, storage.uploads.store], [0, 's3'])
})

dialectTest('MEDIA_STORE=s3: a SIGKILL in the middle of an upload leaves no object listed, and the next start is clean', async (t, dialect) => {
  const s3 = await startS3For(t)
  const dir = mkdtempSync(join(tmpdir(), 'st-s3-kill-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const plan = await planNode(dir, 'killed')
  const env = { ...await dialectEnv(dialect), ...s3.env }
  const node = await startNode(t, plan, env)

  // a 12 MiB upload streamed slowly: killed once its first part is on the server
  const boundary = '----st-kill'
  const url = new URL(`${node.base}/api/upload-image`)
  const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'x-api-key': CLUSTER_KEY, 'content-type': `multipart/form-data; boundary=${boundary}` } })
  req.on('error', () => {}) // the server dies under it
  req.write(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="cut.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`)
  const body = bigJpeg(12 * MIB)
  let sent = 0
  const partOnServer = (): boolean => s3.requests.some((r) => r.method === 'PUT' && /partNumber=1/.test(r.query))
  // the last 256 KiB are held back until the part is on the server, so that the upload is under way when the
  // kill comes however slowly a busy machine takes in the rest (once in a whole npm test it took all 12 MiB first)
  const withheld = body.length - 256 * 1024
  for (let i = 0; i < 400 && !partOnServer() && node.child.exitCode === null; i++) {
    if (sent < withheld) {
      const n = Math.min(256 * 1024, withheld - sent)
      req.write(body.subarray(sent, sent + n))
      sent += n
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.ok(partOnServer(), `the first part reached the server (${sent} bytes sent): ${JSON.stringify(s3.requests.slice(-5))}`)
  assert.ok(sent < body.length, 'the upload was still under way')
  node.child.kill('SIGKILL')
  await node.exited
  req.destroy()

  assert.deepEqual(await s3.keys(), [], 'no half object listed')
  assert.ok(!s3.requests.some((r) => r.method === 'POST' && /uploadId=/.test(r.query)), 'the multipart upload never completed')

  // the next start: no row, no object, no scratch file; it looked for unfinished multipart uploads to abort
  // (s3rver does not list them: it answers 501, and the service goes on); uploads work again
  const mark = s3.requests.length
  const again = await startNode(t, plan, { ...env, LOG_LEVEL: 'debug' })
  assert.ok(s3.requests.slice(mark).some((r) => r.method === 'GET' && /(^|&)uploads(=|&|$)/.test(r.query)), 'ListMultipartUploads at start')
  const api = nodeApi(again.base)
  const storage = await api.get<{ uploads: { count: number, store: string } }>('/storage')
  assert.deepEqual([storage.uploads.count, storage.uploads.store], [0, 's3'])
  assert.deepEqual(filesIn(join(plan.dir, 'uploads')), [])
  const { payload, headers } = form({ field: 'image', filename: 'after.jpg', type: 'image/jpeg', data: jpeg() })
  const res = await fetch(`${again.base}/api/upload-image`, { method: 'POST', headers: { ...headers, 'x-api-key': CLUSTER_KEY }, body: new Uint8Array(payload) })
  assert.equal(res.status, 200, await res.text())
  assert.equal((await s3.keys()).length, 1)
  await again.stop()
  // the secret is in no log line, debug included
  const logged = [...node.output, ...again.output].join('\n')
  assert.match(logged, /media store ready/)
  assert.ok(!logged.includes(S3_SECRET), 'S3_SECRET_ACCESS_KEY never logged')
})
