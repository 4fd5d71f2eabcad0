import assert from 'node:assert/strict'
import { test } from 'node:test'
import { io as connect, type Socket } from 'socket.io-client'
import { build, sqliteOf, TEST_API_KEY, waitFor, type TestApp } from '../helper.js'
import { form, png } from '../uploads/fixtures.js'
import { dialectEnv, dialectTest } from '../support/db-matrix.js'
import { insertSession } from '../support/sessions.js'
import { dbOf } from '../support/db.js'

// Scoped keys on the REST API and socket.io, without the platform: sessions are rows, events come from
// the domain event bus the services use. End to end through real Baileys: e2e.test.ts.

interface Created { id: string, key: string, name: string, sessions: '*' | string[], scopes: string[] }

async function addSessions (s: TestApp, ...ids: string[]): Promise<void> {
  for (const id of ids) {
    await insertSession(s.app, id)
  }
}

async function createKey (s: TestApp, body: Record<string, unknown>): Promise<Created> {
  const res = await s.api({ method: 'POST', url: '/api/keys', payload: body })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: Created }>().data
}

const as = (key: string) => ({ 'x-api-key': key })

test('the admin creates scoped keys: the key is answered once, only its hash is stored, lists never show it', async (t) => {
  const s = await build(t)
  const k = await createKey(s, { name: 'Agency A', sessions: ['a'], scopes: ['read'] })
  assert.match(k.key, /^stk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/)
  assert.ok(k.key.includes(k.id))
  const list = await s.api({ method: 'GET', url: '/api/keys' })
  assert.equal(list.statusCode, 200)
  assert.ok(!list.body.includes(k.key.split('_').at(-1) ?? '-'), 'the secret is not listed')
  assert.deepEqual(list.json<{ data: unknown[] }>().data, [{ id: k.id, name: 'Agency A', sessions: ['a'], scopes: ['read'], createdAt: list.json<{ data: Array<{ createdAt: string }> }>().data[0].createdAt }])
  const rows = sqliteOf(dbOf(s.app)).prepare('select * from api_keys').all() as Array<Record<string, unknown>>
  assert.equal(rows.length, 1)
  const stored = JSON.stringify(rows)
  assert.ok(!stored.includes(k.key.slice(22)), 'the database holds no part of the secret')
  assert.match(String(rows[0].secret_hash), /^[0-9a-f]{64}$/)
  // bad bodies name the field
  const bad = await s.api({ method: 'POST', url: '/api/keys', payload: { name: 'x', sessions: ['a'], scopes: ['write'] } })
  assert.equal(bad.statusCode, 400)
  assert.match(bad.json<{ error: string }>().error, /scopes/)
  const blank = await s.api({ method: 'POST', url: '/api/keys', payload: { name: '  ', sessions: '*', scopes: ['read'] } })
  assert.deepEqual([blank.statusCode, blank.json<{ error: string }>().error], [400, 'body.name must not be blank'])
  // a scoped key may not manage keys, even with every scope
  const all = await createKey(s, { name: 'everything', sessions: '*', scopes: ['read', 'send', 'manage'] })
  for (const [method, url] of [['GET', '/api/keys'], ['POST', '/api/keys'], ['DELETE', `/api/keys/${k.id}`], ['GET', '/api/storage'], ['GET', '/api/cluster'], ['GET', '/metrics']] as const) {
    const res = await s.app.inject({ method, url, headers: as(all.key), ...(method === 'POST' ? { payload: { name: 'n', sessions: '*', scopes: ['read'] } } : {}) })
    assert.equal(res.statusCode, 403, `${method} ${url}: ${res.body}`)
    assert.deepEqual(res.json(), { success: false, error: 'This route needs the admin key' })
  }
  const me = await s.app.inject({ url: '/api/keys/me', headers: { authorization: `Bearer ${all.key}` } })
  assert.deepEqual(me.json<{ data: unknown }>().data, { admin: false, id: all.id, name: 'everything', sessions: '*', scopes: ['read', 'send', 'manage'] })
  const admin = await s.api({ url: '/api/keys/me' })
  assert.equal(admin.json<{ data: { admin: boolean } }>().data.admin, true)
})

dialectTest('a scoped key sees only its sessions: lists filtered, another session 404, scopes enforced with 403', async (t, dialect) => {
  const s = await build(t, await dialectEnv(dialect))
  await addSessions(s, 'a', 'b')
  const reader = await createKey(s, { name: 'reader', sessions: ['a'], scopes: ['read'] })
  const manager = await createKey(s, { name: 'manager', sessions: ['b'], scopes: ['read', 'manage'] })

  for (const headers of [as(reader.key), { authorization: `Bearer ${reader.key}` }, { authorization: `bearer ${reader.key}` }]) {
    const list = await s.app.inject({ url: '/api/sessions', headers })
    assert.equal(list.statusCode, 200, list.body)
    assert.deepEqual(list.json<{ data: Array<{ sessionId: string }> }>().data.map((x) => x.sessionId), ['a'])
  }
  assert.equal((await s.app.inject({ url: '/api/sessions/a/sent-statuses', headers: as(reader.key) })).statusCode, 200)
  // another tenant's session and a session that does not exist answer alike
  for (const url of ['/api/sessions/b/connection-status', '/api/sessions/nope/connection-status', '/api/sessions/b/sent-statuses', '/api/sessions/b/status-viewers/1']) {
    const res = await s.app.inject({ url, headers: as(reader.key) })
    assert.equal(res.statusCode, 404, url)
    assert.deepEqual(res.json(), { success: false, error: 'Session not found' })
  }
  // read cannot send, delete or re-link; on another session it is still 404
  const send = await s.app.inject({ method: 'POST', url: '/api/sessions/a/send-status', headers: as(reader.key), payload: { type: 'text', content: 'hi' } })
  assert.equal(send.statusCode, 403)
  assert.deepEqual(send.json(), { success: false, error: 'This key lacks the send scope' })
  assert.equal((await s.app.inject({ method: 'DELETE', url: '/api/sessions/a', headers: as(reader.key) })).statusCode, 403)
  assert.equal((await s.app.inject({ method: 'DELETE', url: '/api/sessions/a/delete-status/1', headers: as(reader.key) })).statusCode, 403)
  assert.equal((await s.app.inject({ method: 'POST', url: '/api/sessions/a/restart', headers: as(reader.key) })).statusCode, 403)
  assert.equal((await s.app.inject({ method: 'POST', url: '/api/sessions/b/send-status', headers: as(reader.key), payload: { type: 'text', content: 'hi' } })).statusCode, 404)
  assert.equal((await s.app.inject({ method: 'POST', url: '/api/sessions', headers: as(reader.key), payload: { sessionId: 'c', sessionName: 'c', authMethod: 'qrcode' } })).statusCode, 403)

  // stats count only the key's sessions
  await dbOf(s.app).db.insertInto('statuses').values([
    { session_id: 'a', type: 'text', content: 'x', caption: '', message_id: 'M1', state: 'sent', created_at: Date.now(), contact_count: 1, target_numbers: '' },
    { session_id: 'b', type: 'text', content: 'y', caption: '', message_id: 'M2', state: 'sent', created_at: Date.now(), contact_count: 1, target_numbers: '' },
    { session_id: 'b', type: 'text', content: 'z', caption: '', message_id: 'M3', state: 'sent', created_at: Date.now(), contact_count: 1, target_numbers: '' }
  ]).execute()
  const stats = (key: string) => s.app.inject({ url: '/api/stats', headers: as(key) }).then((r) => r.json<{ data: { totalSessions: number, totalStatuses: number, sessions: Array<{ sessionId: string }> } }>().data)
  assert.deepEqual(await stats(reader.key).then((d) => [d.totalSessions, d.totalStatuses, d.sessions.map((x) => x.sessionId)]), [1, 1, ['a']])
  assert.deepEqual(await stats(manager.key).then((d) => [d.totalSessions, d.totalStatuses]), [1, 2])
  assert.deepEqual(await stats(TEST_API_KEY).then((d) => [d.totalSessions, d.totalStatuses]), [2, 3])

  // manage creates a session, which joins the key's list
  const created = await s.app.inject({ method: 'POST', url: '/api/sessions', headers: as(manager.key), payload: { sessionId: 'c', sessionName: 'C', authMethod: 'qrcode' } })
  assert.equal(created.statusCode, 200, created.body)
  const mine = await s.app.inject({ url: '/api/sessions', headers: as(manager.key) })
  assert.deepEqual(mine.json<{ data: Array<{ sessionId: string }> }>().data.map((x) => x.sessionId), ['b', 'c'])
  const listed = await s.api({ url: '/api/keys' })
  assert.deepEqual(listed.json<{ data: Array<{ id: string, sessions: string[] }> }>().data.find((k) => k.id === manager.id)?.sessions, ['b', 'c'])
  // deleting it takes it off the list: a later session with that id is not the key's
  assert.equal((await s.app.inject({ method: 'DELETE', url: '/api/sessions/c', headers: as(manager.key) })).statusCode, 200)
  await addSessions(s, 'c')
  assert.equal((await s.app.inject({ url: '/api/sessions/c/connection-status', headers: as(manager.key) })).statusCode, 404)

  // revoked: refused at once
  assert.equal((await s.api({ method: 'DELETE', url: `/api/keys/${reader.id}` })).statusCode, 200)
  const gone = await s.app.inject({ url: '/api/sessions', headers: as(reader.key) })
  assert.equal(gone.statusCode, 401)
  assert.deepEqual(gone.json(), { success: false, error: 'Unauthorized' })
  assert.equal((await s.app.inject({ url: '/api/sessions', headers: { authorization: `Bearer ${reader.key}` } })).statusCode, 401)
  assert.equal((await s.api({ method: 'DELETE', url: `/api/keys/${reader.id}` })).statusCode, 404)
  // a wrong secret for a real id is refused like any wrong key
  const forged = manager.key.slice(0, -4) + (manager.key.endsWith('AAAA') ? 'BBBB' : 'AAAA')
  assert.equal((await s.app.inject({ url: '/api/health', headers: as(forged) })).statusCode, 401)
})

test('webhooks made with a scoped key: only its sessions, only its endpoints', async (t) => {
  const s = await build(t, { ALLOW_PRIVATE_URLS: 'true' })
  await addSessions(s, 'a', 'b')
  const ka = await createKey(s, { name: 'A', sessions: ['a'], scopes: ['read', 'manage'] })
  const kb = await createKey(s, { name: 'B', sessions: ['b'], scopes: ['read', 'manage'] })
  const make = async (key: string, body: Record<string, unknown>) => await s.app.inject({ method: 'POST', url: '/api/webhooks', headers: as(key), payload: body })
  assert.equal((await make(ka.key, { url: 'http://127.0.0.1:9/a', sessionId: 'b' })).statusCode, 404, 'another tenant\'s session is unknown')
  const ha = (await make(ka.key, { url: 'http://127.0.0.1:9/a' })).json<{ data: { id: string } }>().data
  const hb = (await make(kb.key, { url: 'http://127.0.0.1:9/b' })).json<{ data: { id: string } }>().data
  const ids = async (key: string) => (await s.app.inject({ url: '/api/webhooks', headers: as(key) })).json<{ data: Array<{ id: string }> }>().data.map((h) => h.id)
  assert.deepEqual(await ids(ka.key), [ha.id])
  assert.deepEqual(await ids(TEST_API_KEY), [ha.id, hb.id])
  assert.equal((await s.app.inject({ url: `/api/webhooks/${hb.id}`, headers: as(ka.key) })).statusCode, 404)
  assert.equal((await s.app.inject({ method: 'DELETE', url: `/api/webhooks/${hb.id}`, headers: as(ka.key) })).statusCode, 404)

  // deliveries are made from the event log after each event's commit (plugins/webhooks/dispatch.ts)
  const rows = () => sqliteOf(dbOf(s.app)).prepare('select webhook_id, session_id from webhook_deliveries order by id').all()
  s.app.domainEvents.emit('statuses-updated', { sessionId: 'a', action: 'cleanup' })
  s.app.domainEvents.emit('statuses-updated', { sessionId: 'b', action: 'cleanup' })
  await waitFor(() => rows().length >= 2, 10_000, 'the deliveries of both events')
  assert.deepEqual(rows(), [{ webhook_id: ha.id, session_id: 'a' }, { webhook_id: hb.id, session_id: 'b' }])
  // a revoked key's endpoints hear nothing more (an event of b after a's marks when both were dispatched)
  await s.api({ method: 'DELETE', url: `/api/keys/${ka.id}` })
  s.app.domainEvents.emit('statuses-updated', { sessionId: 'a', action: 'cleanup' })
  s.app.domainEvents.emit('statuses-updated', { sessionId: 'b', action: 'cleanup' })
  await waitFor(() => rows().length >= 3, 10_000, 'the delivery of b\'s event')
  assert.deepEqual(rows().slice(2), [{ webhook_id: hb.id, session_id: 'b' }])
})

test('an upload made with a scoped key is posted by that key only', async (t) => {
  const s = await build(t)
  await addSessions(s, 'a', 'b')
  const ka = await createKey(s, { name: 'A', sessions: ['a'], scopes: ['send'] })
  const kb = await createKey(s, { name: 'B', sessions: ['b'], scopes: ['send'] })
  const body = form({ field: 'image', filename: 'private.png', type: 'image/png', data: png() })
  const up = await s.app.inject({ method: 'POST', url: '/api/upload-image', payload: body.payload, headers: { ...body.headers, ...as(ka.key) } })
  assert.equal(up.statusCode, 200, up.body)
  const { filename } = up.json<{ filename: string }>()
  const send = async (key: string, sessionId: string) => await s.app.inject({ method: 'POST', url: `/api/sessions/${sessionId}/send-status`, headers: as(key), payload: { type: 'image', content: filename } })
  const other = await send(kb.key, 'b')
  assert.equal(other.statusCode, 400)
  assert.deepEqual(other.json(), { success: false, error: 'Uploaded file not found' })
  // its own key and the admin key get past the check (to the platform: the session is not connected)
  for (const key of [ka.key, TEST_API_KEY]) {
    const own = await send(key, 'a')
    assert.equal(own.json<{ error: string }>().error, 'WhatsApp is not connected', own.body)
  }
})

test('rate limits count per scoped key as well as per address; TRUST_PROXY makes the address the forwarded client', async (t) => {
  const direct = await build(t, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' })
  const k = await createKey(direct, { name: 'k', sessions: '*', scopes: ['read'] })
  // one key from four addresses: the fourth request is over the key's budget although no address is
  const answers = []
  for (let i = 1; i <= 4; i++) answers.push(await direct.app.inject({ url: '/api/health', headers: as(k.key), remoteAddress: `10.0.0.${i}` }))
  assert.deepEqual(answers.map((r) => r.statusCode), [200, 200, 200, 429])
  // the key's 429 says when to retry, in the header as in the message (as the per-address one does)
  const over = answers[3]
  const seconds = /^Too many requests, retry in (\d+) seconds$/.exec(over.json<{ error: string }>().error)?.[1]
  assert.ok(seconds !== undefined && Number(seconds) >= 1 && Number(seconds) <= 60, over.body)
  assert.equal(over.headers['retry-after'], seconds)
  // the admin key is counted per address only
  const admin: number[] = []
  for (let i = 1; i <= 4; i++) admin.push((await direct.app.inject({ url: '/api/health', headers: as(TEST_API_KEY), remoteAddress: `10.0.1.${i}` })).statusCode)
  assert.deepEqual(admin, [200, 200, 200, 200])
  // without TRUST_PROXY, X-Forwarded-For is ignored: everyone behind one address shares its budget
  for (let i = 0; i < 3; i++) await direct.app.inject({ url: '/api/health', remoteAddress: '10.9.9.9', headers: { 'x-forwarded-for': `203.0.113.${i}` } })
  assert.equal((await direct.app.inject({ url: '/api/health', remoteAddress: '10.9.9.9', headers: { 'x-forwarded-for': '203.0.113.99' } })).statusCode, 429)

  const proxied = await build(t, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000', TRUST_PROXY: '10.9.9.9' })
  for (let i = 0; i < 3; i++) await proxied.app.inject({ url: '/api/health', remoteAddress: '10.9.9.9', headers: { 'x-forwarded-for': '203.0.113.1' } })
  assert.equal((await proxied.app.inject({ url: '/api/health', remoteAddress: '10.9.9.9', headers: { 'x-forwarded-for': '203.0.113.1' } })).statusCode, 429)
  assert.equal((await proxied.app.inject({ url: '/api/health', remoteAddress: '10.9.9.9', headers: { 'x-forwarded-for': '203.0.113.2' } })).statusCode, 401, 'another client behind the proxy has its own budget')
  // a proxy not trusted cannot choose the address
  for (let i = 0; i < 3; i++) await proxied.app.inject({ url: '/api/health', remoteAddress: '10.8.8.8', headers: { 'x-forwarded-for': `198.51.100.${i}` } })
  assert.equal((await proxied.app.inject({ url: '/api/health', remoteAddress: '10.8.8.8', headers: { 'x-forwarded-for': '198.51.100.50' } })).statusCode, 429)
})

test('OpenAPI names the scope of every /api operation', async (t) => {
  const { app } = await build(t)
  const doc = (await app.inject({ url: '/docs/json' })).json<{ paths: Record<string, Record<string, { 'x-scopes'?: string[], description?: string }>> }>()
  const expected: Record<string, string[]> = {
    'post /api/sessions/{sessionId}/send-status': ['send'],
    'get /api/sessions': ['read'],
    'post /api/sessions': ['manage'],
    'post /api/keys': ['admin'],
    'get /api/health': []
  }
  for (const [path, methods] of Object.entries(doc.paths)) {
    if (!path.startsWith('/api/')) continue
    for (const [method, op] of Object.entries(methods)) {
      assert.ok(Array.isArray(op['x-scopes']), `${method} ${path} has x-scopes`)
      assert.match(op.description ?? '', /scope|admin key|Any valid key/, `${method} ${path} says its scope`)
      const want = expected[`${method} ${path}`]
      if (want !== undefined) assert.deepEqual(op['x-scopes'], want, `${method} ${path}`)
    }
  }
})

function connected (socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => { resolve('timeout') }, 5000)
    socket.once('connect', () => { clearTimeout(timer); resolve('connected') })
    socket.once('connect_error', (err) => { clearTimeout(timer); resolve(err.message) })
  })
}

test('socket.io: clients hear the sessions they subscribed to (default: all their key sees); revoking closes a key\'s sockets', async (t) => {
  const s = await build(t)
  await addSessions(s, 'a', 'b')
  const url = await s.listen()
  const ka = await createKey(s, { name: 'A', sessions: ['a'], scopes: ['read'] })
  const open = (auth: Record<string, unknown>): Socket => {
    const socket = connect(url, { auth, transports: ['websocket'], reconnection: false, forceNew: true })
    t.after(() => { socket.close() })
    return socket
  }
  const heard = (socket: Socket): string[] => {
    const got: string[] = []
    socket.on('statuses-updated', (p: { sessionId: string }) => { got.push(p.sessionId) })
    return got
  }
  const everything = open({ apiKey: TEST_API_KEY })
  const onlyB = open({ apiKey: TEST_API_KEY, sessionIds: ['b'] })
  const tenant = open({ apiKey: ka.key })
  const got = [everything, onlyB, tenant].map(heard)
  assert.deepEqual(await Promise.all([everything, onlyB, tenant].map(connected)), ['connected', 'connected', 'connected'])
  assert.equal(await connected(open({ apiKey: ka.key, sessionIds: ['b'] })), 'Session not found: b')
  assert.equal(await connected(open({ apiKey: TEST_API_KEY, sessionIds: 'b' })), 'auth.sessionIds must be "*" or an array of session ids')

  const round = async (n: number): Promise<void> => {
    for (const id of ['a', 'b', 'a', 'b']) s.app.domainEvents.emit('statuses-updated', { sessionId: id })
    await waitFor(() => got[0].length >= n, 5000, 'the events')
  }
  await round(4)
  await waitFor(() => got[1].length >= 2 && got[2].length >= 2, 5000, 'the subscribed events')
  assert.deepEqual(got, [['a', 'b', 'a', 'b'], ['b', 'b'], ['a', 'a']])

  // subscribe / unsubscribe, acknowledged
  const ack = async (socket: Socket, event: string, arg: unknown): Promise<unknown> => await socket.timeout(5000).emitWithAck(event, arg)
  assert.deepEqual(await ack(everything, 'subscribe', { sessionIds: ['a'] }), { success: true, data: { sessionIds: ['a'] } })
  assert.deepEqual(await ack(onlyB, 'subscribe', { sessionIds: ['a'] }), { success: true, data: { sessionIds: ['b', 'a'] } })
  assert.deepEqual(await ack(tenant, 'subscribe', { sessionIds: ['b'] }), { success: false, error: 'Session not found: b' })
  assert.deepEqual(await ack(onlyB, 'unsubscribe', { sessionIds: ['b'] }), { success: true, data: { sessionIds: ['a'] } })
  for (const g of got) g.length = 0
  for (const id of ['b', 'a']) s.app.domainEvents.emit('statuses-updated', { sessionId: id })
  await waitFor(() => got.every((g) => g.length >= 1), 5000, 'the events after subscribing')
  assert.deepEqual(got, [['a'], ['a'], ['a']])
  assert.deepEqual(await ack(everything, 'subscribe', '*'), { success: true, data: { sessionIds: '*' } })

  // revoked: its sockets are closed at once
  const closed = new Promise<string>((resolve) => { tenant.once('disconnect', resolve) })
  assert.equal((await s.api({ method: 'DELETE', url: `/api/keys/${ka.id}` })).statusCode, 200)
  assert.equal(await closed, 'io server disconnect')
  assert.equal(await connected(open({ apiKey: ka.key })), 'Unauthorized')
})

test('socket.io: a recovered connection keeps what it subscribed to', async (t) => {
  const s = await build(t)
  const url = await s.listen()
  const socket = connect(url, { auth: { apiKey: TEST_API_KEY, sessionIds: ['a'] }, transports: ['websocket'], reconnection: false, forceNew: true })
  t.after(() => { socket.close() })
  const got: string[] = []
  socket.on('statuses-updated', (p: { sessionId: string }) => { got.push(p.sessionId) })
  assert.equal(await connected(socket), 'connected')
  assert.deepEqual(await socket.timeout(5000).emitWithAck('subscribe', ['b']), { success: true, data: { sessionIds: ['a', 'b'] } })
  // what the socket hears, for readers of socket.data (the event log's catch-up)
  assert.deepEqual([...s.app.io.of('/').sockets.values()].map((x) => (x.data as { sessionIds: unknown }).sessionIds), [['a', 'b']])
  // recovery resumes from the last event received
  s.app.domainEvents.emit('statuses-updated', { sessionId: 'b' })
  await waitFor(() => got.length === 1, 5000, 'a first event')
  got.length = 0
  socket.io.engine.close()
  await waitFor(() => s.app.io.of('/').sockets.size === 0, 5000, 'the server to see the disconnect')
  socket.connect()
  assert.equal(await connected(socket), 'connected')
  assert.equal(socket.recovered, true)
  for (const id of ['c', 'b', 'a']) s.app.domainEvents.emit('statuses-updated', { sessionId: id })
  await waitFor(() => got.length >= 2, 5000, 'the subscribed events')
  s.app.domainEvents.emit('statuses-updated', { sessionId: 'a' })
  await waitFor(() => got.length >= 3, 5000, 'the last event')
  assert.deepEqual(got, ['b', 'a', 'a'])
})
