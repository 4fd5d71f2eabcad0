import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import { Type } from '@sinclair/typebox'
import { PIECE_CHARS } from '../../plugins/core/pieced-json.js'
import { Ok } from '../../schemas/envelope.js'
import { SentStatusSchema } from '../../schemas/status.js'
import { SQLite } from '../../src/db/sqlite/driver.js'
import { build, TEST_API_KEY, waitFor } from '../helper.js'
import { insertSession } from '../support/sessions.js'
import { dbOf } from '../support/db.js'

// GET …/sent-statuses is a query per request (its cached bytes, the sent-statuses-bytes speed trick, went with
// the list request-rate target in issue 34). Whatever changes the list shows at once.

async function setup (t: Parameters<typeof build>[0], env: Record<string, string> = {}) {
  const s = await build(t, env)
  const { db } = dbOf(s.app)
  const addSession = async (id: string): Promise<void> => {
    await insertSession(s.app, id, { ownNumber: '15550000000' })
  }
  const addStatus = async (sessionId: string, messageId: string, createdAt = Date.now()): Promise<number> => {
    const { id } = await db.insertInto('statuses').values({
      session_id: sessionId, type: 'text', content: `text of ${messageId}`, caption: '', message_id: messageId, state: 'sent', created_at: createdAt,
      contact_count: 1, target_numbers: '15551110000', media_file: null, background_color: null, font: null, error: null
    }).returning('id').executeTakeFirstOrThrow()
    return id
  }
  const list = async (sessionId: string) => {
    const res = await s.api({ method: 'GET', url: `/api/sessions/${sessionId}/sent-statuses` })
    return { status: res.statusCode, type: res.headers['content-type'], body: res.json<{ success: boolean, data: Array<{ id: string, content: string, viewerCount: number, error: string | null }>, error?: string }>() }
  }
  return { ...s, addSession, addStatus, list }
}

test('sent-statuses: the same answer as the service computes, and every write shows at once', async (t) => {
  const s = await setup(t)
  await s.addSession('a')
  const first = await s.addStatus('a', 'M1', Date.now() - 1000)
  await s.addStatus('a', 'M2')

  const before = await s.list('a')
  assert.equal(before.type, 'application/json; charset=utf-8')
  assert.deepEqual(before.body, { success: true, data: await s.app.statuses.list('a') })
  assert.deepEqual(before.body.data.map((x) => [x.content, x.viewerCount]), [['text of M2', 0], ['text of M1', 0]])
  assert.deepEqual((await s.list('a')).body, before.body, 'a repeated read answers the same')

  // a view recorded by the ingest
  await s.app.viewerIngest.commit('a', [{ messageId: 'M1', viewerJid: '15551110000@s.whatsapp.net', viewerNumber: '15551110000', isOwn: false, type: 'read', at: Date.now() }])
  assert.equal((await s.list('a')).body.data.find((x) => x.id === String(first))?.viewerCount, 1)

  // a rejection, a new status, a deletion through the API
  await dbOf(s.app).db.updateTable('statuses').set({ error: '479' }).where('id', '=', first).execute()
  assert.equal((await s.list('a')).body.data.find((x) => x.id === String(first))?.error, '479')
  await s.addStatus('a', 'M3')
  assert.equal((await s.list('a')).body.data.length, 3)
  const del = await s.api({ method: 'DELETE', url: `/api/sessions/a/delete-status/${first}` })
  assert.equal(del.statusCode, 200)
  assert.deepEqual((await s.list('a')).body.data.map((x) => x.content), ['text of M3', 'text of M2'])

  // a write by another connection to the same file
  const other = new SQLite(s.config.databaseFile)
  t.after(() => { other.close() })
  other.prepare("update statuses set content = 'edited' where message_id = 'M2'").run()
  assert.deepEqual((await s.list('a')).body.data.map((x) => x.content), ['text of M3', 'edited'])
})

test('sent-statuses: a removed session answers 404, and one created again under its id starts empty', async (t) => {
  const s = await setup(t)
  await s.addSession('b')
  await s.addStatus('b', 'M1')
  assert.equal((await s.list('b')).body.data.length, 1)
  await dbOf(s.app).db.deleteFrom('sessions').where('id', '=', 'b').execute()
  assert.deepEqual((await s.list('b')), { status: 404, type: 'application/json; charset=utf-8', body: { success: false, error: 'Session not found' } })
  await s.addSession('b')
  assert.deepEqual((await s.list('b')).body, { success: true, data: [] })
})

test('sent-statuses: a status leaves the list when it expires, with no write in between', async (t) => {
  const ttlMs = 3600
  const s = await setup(t, { STATUS_TTL_HOURS: String(ttlMs / 3_600_000) })
  await s.addSession('c')
  await s.addStatus('c', 'OLD', Date.now() - ttlMs + 400)
  await s.addStatus('c', 'NEW', Date.now())
  assert.deepEqual((await s.list('c')).body.data.map((x) => x.content), ['text of NEW', 'text of OLD'])
  await waitFor(async () => (await s.list('c')).body.data.length === 1, 5000, 'the old status to expire from the list')
  assert.deepEqual((await s.list('c')).body.data.map((x) => x.content), ['text of NEW'])
})

test('sent-statuses: a long list is the very text its response schema gives, with its Content-Length, plain and compressed', async (t) => {
  const s = await setup(t)
  await s.addSession('long')
  const now = Date.now()
  for (let i = 0; i < 400; i++) await s.addStatus('long', `L${i}`, now - i * 1000)
  // text that JSON escapes, and characters of two to four UTF-8 bytes: Content-Length counts bytes
  await dbOf(s.app).db.updateTable('statuses').set({ content: 'quote " backslash \\ newline \n café ✓ 😀', error: 'tab\t' }).where('message_id', 'in', ['L0', 'L150', 'L399']).execute()
  const serialize = SerializerSelector()({}, {})({ schema: Ok(Type.Array(SentStatusSchema)), method: 'GET', url: '', httpStatus: '200' }) as (x: unknown) => string
  const expected = serialize({ success: true, data: await s.app.statuses.list('long') })
  assert.ok(expected.length > 3 * PIECE_CHARS, `${expected.length} characters: several pieces`)
  const base = await s.listen()
  const plain = await fetch(`${base}/api/sessions/long/sent-statuses`, { headers: { 'x-api-key': TEST_API_KEY, 'accept-encoding': 'identity' } })
  assert.equal(await plain.text(), expected)
  assert.equal(plain.headers.get('content-type'), 'application/json; charset=utf-8')
  assert.equal(plain.headers.get('content-length'), String(Buffer.byteLength(expected)))
  assert.equal(plain.headers.get('transfer-encoding'), null)
  const gzip = await fetch(`${base}/api/sessions/long/sent-statuses`, { headers: { 'x-api-key': TEST_API_KEY, 'accept-encoding': 'gzip' } })
  assert.equal(gzip.headers.get('content-encoding'), 'gzip')
  assert.equal(await gzip.text(), expected)
  // a short list is one piece, sent as it is
  await s.addSession('short')
  await s.addStatus('short', 'S1')
  const short = await s.api({ method: 'GET', url: '/api/sessions/short/sent-statuses' })
  assert.equal(short.body, serialize({ success: true, data: await s.app.statuses.list('short') }))
  assert.equal(short.headers['content-length'], String(Buffer.byteLength(short.body)))
})
