import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import { PIECE_CHARS } from '../../plugins/core/pieced-json.js'
import { Ok } from '../../schemas/envelope.js'
import { StatsSchema } from '../../schemas/system.js'
import { build, TEST_API_KEY } from '../helper.js'
import { insertSession } from '../support/sessions.js'
import { dbOf } from '../support/db.js'

test('stats start empty with lastStatusSent null', async (t) => {
  const { api } = await build(t)
  const res = await api({ method: 'GET', url: '/api/stats' })
  assert.equal(res.statusCode, 200)
  assert.deepEqual(res.json(), {
    success: true,
    data: {
      totalSessions: 0, connectedSessions: 0, totalStatuses: 0, totalViewers: 0, totalReactions: 0, totalReplies: 0, lastStatusSent: null,
      start: { concurrency: 4, waiting: 0, opening: 0 },
      sessions: []
    }
  })
})

test('stats and storage count what the database holds', async (t) => {
  const { api, app } = await build(t)
  const { db } = dbOf(app)
  const now = Date.now()
  await insertSession(app, 's1', { name: 'One', createdAt: now - 1000 })
  await db.insertInto('uploads').values({ filename: 'f.png', kind: 'image', mime_type: 'image/png', size: 1234, created_at: now }).execute()
  const base = { session_id: 's1', caption: '', state: 'sent' as const, contact_count: 1, target_numbers: '', background_color: null, font: null, error: null }
  const { id } = await db.insertInto('statuses').values({ ...base, type: 'image', content: 'f.png', message_id: 'M1', created_at: now - 500, media_file: 'f.png' }).returning('id').executeTakeFirstOrThrow()
  await db.insertInto('statuses').values({ ...base, type: 'text', content: 'hi', message_id: 'M2', created_at: now, media_file: null }).execute()
  await db.insertInto('viewers').values([
    { status_id: id, viewer: '15550000001', number: '15550000001', jid: '15550000001@s.whatsapp.net', viewed_at: now, is_real: 1 },
    { status_id: id, viewer: '15550000009', number: '15550000009', jid: '15550000009@s.whatsapp.net', viewed_at: now, is_real: 0 }
  ]).execute()
  await db.insertInto('auth_creds').values({ session_id: 's1', creds: '{}', updated_at: now }).execute()

  const stats = (await api({ method: 'GET', url: '/api/stats' })).json().data
  assert.equal(stats.totalSessions, 1)
  assert.equal(stats.connectedSessions, 0)
  assert.equal(stats.totalStatuses, 2)
  assert.equal(stats.totalViewers, 1, 'the own account\'s view is not counted')
  assert.equal(stats.lastStatusSent, new Date(now).toISOString())
  assert.deepEqual(stats.sessions, [{ sessionId: 's1', sessionName: 'One', connected: false, ownNumber: null, createdAt: new Date(now - 1000).toISOString() }])

  const storage = (await api({ method: 'GET', url: '/api/storage' })).json().data
  assert.ok(storage.database.bytes > 0)
  assert.equal(typeof storage.database.walBytes, 'number')
  assert.deepEqual(storage.uploads, { count: 1, bytes: 1234, store: 'local', location: app.config.uploadDir })
  assert.deepEqual(storage.sessions, [{ sessionId: 's1', statuses: 2, viewers: 2, authStateRows: 1, mediaFiles: 1, mediaBytes: 1234 }])
})

test('stats with many sessions: the very text its response schema gives, with its Content-Length (sent in pieces, issue 41)', async (t) => {
  const { app, listen } = await build(t, { SESSION_START_CONCURRENCY: '1' })
  const now = Date.now()
  for (let i = 0; i < 400; i++) await insertSession(app, `many-${i}`, { name: `Session "${i}" ✓`, createdAt: now - i * 1000 })
  const base = await listen()
  const res = await fetch(`${base}/api/stats`, { headers: { 'x-api-key': TEST_API_KEY, 'accept-encoding': 'identity' } })
  const text = await res.text()
  const answer = JSON.parse(text) as { data: { totalSessions: number, sessions: Array<{ sessionId: string }> } }
  assert.equal(answer.data.totalSessions, 400)
  assert.equal(answer.data.sessions[0].sessionId, 'many-399', 'oldest first')
  const serialize = SerializerSelector()({}, {})({ schema: Ok(StatsSchema), method: 'GET', url: '', httpStatus: '200' }) as (x: unknown) => string
  assert.equal(text, serialize(answer))
  assert.ok(text.length > 1.5 * PIECE_CHARS, `${text.length} characters: two pieces at least`)
  assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)))
  assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
})
