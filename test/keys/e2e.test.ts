import assert from 'node:assert/strict'
import { test } from 'node:test'
import { io as connect, type Socket } from 'socket.io-client'
import { sqliteOf, TEST_API_KEY, waitFor } from '../helper.js'
import { Recorder, startStack } from '../stack.js'
import { startReceiver } from '../webhooks/receiver.js'
import { dbOf } from '../support/db.js'

// Two tenants through the whole stack: real Baileys linked to the emulator, two sessions, a scoped key
// for each. Each key's REST calls, socket.io clients and webhooks see only its session over a full send
// and views of both; a read key cannot send; a revoked key is refused and its socket closed.

const OWN_A = '4915200000101'
const OWN_B = '4915200000102'
const V1 = '4915200000111'
const V2 = '4915200000112'

interface Key { id: string, key: string }

test('two tenants: REST, socket.io and webhooks of each key see only its session; read cannot send; revoke is at once', { timeout: 170_000 }, async (t) => {
  const s = await startStack(t, { ALLOW_PRIVATE_URLS: 'true', WEBHOOK_BASE_DELAY_MS: '50', WEBHOOK_MAX_DELAY_MS: '500' })
  await s.link('alpha', OWN_A)
  await s.link('beta', OWN_B)
  const url = `http://127.0.0.1:${(s.app.server.address() as { port: number }).port}`

  const newKey = async (sessions: string[], scopes: string[]): Promise<Key> => {
    const res = await s.api({ method: 'POST', url: '/api/keys', payload: { name: sessions.join(','), sessions, scopes } })
    assert.equal(res.statusCode, 200, res.body)
    return res.json<{ data: Key }>().data
  }
  const ka = await newKey(['alpha'], ['read', 'send', 'manage'])
  const kb = await newKey(['beta'], ['read', 'send', 'manage'])
  const reader = await newKey(['alpha'], ['read'])
  const as = (k: Key) => ({ authorization: `Bearer ${k.key}` })

  const sockets: Socket[] = []
  const listen = async (auth: Record<string, unknown>): Promise<Recorder> => {
    const socket = connect(url, { path: '/socket.io/', auth, transports: ['websocket'], reconnection: false, forceNew: true })
    sockets.push(socket)
    const rec = new Recorder(socket)
    await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('connect_error', reject) })
    return rec
  }
  t.after(() => { for (const socket of sockets) socket.close() })
  const sockA = await listen({ apiKey: ka.key })
  const sockB = await listen({ apiKey: kb.key })
  const adminBeta = await listen({ apiKey: TEST_API_KEY, sessionIds: ['beta'] })

  const rxA = await startReceiver(t)
  const rxB = await startReceiver(t)
  const hook = async (k: Key, rxUrl: string): Promise<{ id: string, secret: string }> => {
    const res = await s.app.inject({ method: 'POST', url: '/api/webhooks', headers: as(k), payload: { url: rxUrl } })
    assert.equal(res.statusCode, 200, res.body)
    return res.json<{ data: { id: string, secret: string } }>().data
  }
  const hookA = await hook(ka, rxA.url)
  const hookB = await hook(kb, rxB.url)

  // a read key cannot send; a key cannot send on the other tenant's session (404, not 403)
  const readerSend = await s.app.inject({ method: 'POST', url: '/api/sessions/alpha/send-status', headers: as(reader), payload: { type: 'text', content: 'no' } })
  assert.equal(readerSend.statusCode, 403, readerSend.body)
  const crossSend = await s.app.inject({ method: 'POST', url: '/api/sessions/beta/send-status', headers: as(ka), payload: { type: 'text', content: 'no' } })
  assert.equal(crossSend.statusCode, 404, crossSend.body)

  /** a full send and views of one session, through its own key; done when the admin's socket has the last viewers update */
  const sendAndView = async (k: Key, sessionId: string): Promise<{ statusId: string }> => {
    const sent = await s.app.inject({ method: 'POST', url: `/api/sessions/${sessionId}/send-status`, headers: as(k), payload: { type: 'text', content: `hello from ${sessionId}`, targetNumbers: `${V1},${V2}` } })
    assert.equal(sent.statusCode, 200, sent.body)
    const { statusId, platformMessageId } = sent.json<{ data: { statusId: string, platformMessageId: string } }>().data
    await s.emu.waitForStatus((r) => r.id === platformMessageId && r.decrypted, 15_000)
    await s.emu.sendView(platformMessageId, { viewer: V1, type: 'read', via: 'pn' })
    await s.emu.sendView(platformMessageId, { viewer: V2, type: 'read', via: 'lid' })
    await s.events.next('status-viewers-update', (p) => p.sessionId === sessionId && p.statusId === statusId && p.viewers.length === 2, 15_000)
    return { statusId }
  }
  const b1 = await sendAndView(kb, 'beta')
  const a1 = await sendAndView(ka, 'alpha')
  // a last beta event, after all of alpha's: a client of beta that had alpha's events would have them by now
  const del = await s.app.inject({ method: 'DELETE', url: `/api/sessions/beta/delete-status/${b1.statusId}`, headers: as(kb) })
  assert.equal(del.statusCode, 200, del.body)

  await sockA.next('status-viewers-update', (p) => p.statusId === a1.statusId && p.viewers.length === 2, 15_000)
  await sockB.next('status-deleted', (p) => p.statusId === b1.statusId, 15_000)
  await adminBeta.next('status-deleted', (p) => p.statusId === b1.statusId, 15_000)
  const sessionsOf = (rec: Recorder): Set<unknown> => new Set(rec.seen.map((e) => (e.payload as { sessionId?: unknown }).sessionId))
  assert.deepEqual(sessionsOf(sockA), new Set(['alpha']), 'key A\'s socket heard only alpha')
  assert.deepEqual(sessionsOf(sockB), new Set(['beta']), 'key B\'s socket heard only beta')
  assert.deepEqual(sessionsOf(adminBeta), new Set(['beta']), 'the admin socket subscribed to beta heard only beta')
  for (const rec of [sockA, sockB, adminBeta]) {
    const kinds = new Set(rec.seen.map((e) => e.event))
    for (const kind of ['status-sent', 'status-viewers-update']) assert.ok(kinds.has(kind as never), `a tenant socket heard ${kind}`)
  }
  // and the admin's unfiltered socket heard both
  assert.deepEqual(sessionsOf(s.events), new Set(['alpha', 'beta']))

  // webhooks: each key's endpoint got its session's events only (every delivery row is written when the event is emitted)
  const rows = sqliteOf(dbOf(s.app)).prepare('select webhook_id as id, session_id as sessionId from webhook_deliveries').all() as Array<{ id: string, sessionId: string }>
  assert.deepEqual(new Set(rows.filter((r) => r.id === hookA.id).map((r) => r.sessionId)), new Set(['alpha']))
  assert.deepEqual(new Set(rows.filter((r) => r.id === hookB.id).map((r) => r.sessionId)), new Set(['beta']))
  await waitFor(() => rxA.verified(hookA.secret).some((j) => j.type === 'status-viewers-update' && (j.data.viewers as unknown[]).length === 2), 20_000, 'alpha\'s viewers by webhook')
  await waitFor(() => rxB.verified(hookB.secret).some((j) => j.type === 'status-deleted'), 20_000, 'beta\'s delete by webhook')
  assert.ok(rxA.verified(hookA.secret).every((j) => j.data.sessionId === 'alpha'))
  assert.ok(rxB.verified(hookB.secret).every((j) => j.data.sessionId === 'beta'))

  // REST: lists and reads of each key
  const get = async (k: Key, path: string) => await s.app.inject({ url: path, headers: as(k) })
  assert.deepEqual((await get(ka, '/api/sessions')).json<{ data: Array<{ sessionId: string }> }>().data.map((x) => x.sessionId), ['alpha'])
  assert.equal((await get(ka, `/api/sessions/alpha/status-viewers/${a1.statusId}`)).json<{ data: unknown[] }>().data.length, 2)
  assert.equal((await get(ka, '/api/sessions/beta/sent-statuses')).statusCode, 404)
  assert.equal((await get(kb, `/api/sessions/alpha/status-viewers/${a1.statusId}`)).statusCode, 404)
  assert.equal((await get(reader, '/api/sessions/alpha/sent-statuses')).json<{ data: unknown[] }>().data.length, 1)

  // revoked: refused at once, its socket closed, its endpoint hears nothing more
  const closed = new Promise<string>((resolve) => { sockets[0].once('disconnect', resolve) })
  assert.equal((await s.api({ method: 'DELETE', url: `/api/keys/${ka.id}` })).statusCode, 200)
  assert.equal(await closed, 'io server disconnect')
  assert.equal((await get(ka, '/api/sessions')).statusCode, 401)
  const before = rows.filter((r) => r.id === hookA.id).length
  const again = await s.api({ method: 'POST', url: '/api/sessions/alpha/send-status', payload: { type: 'text', content: 'after the revoke', targetNumbers: V1 } })
  assert.equal(again.statusCode, 200, again.body)
  await s.events.next('status-sent', (p) => p.statusId === again.json<{ data: { statusId: string } }>().data.statusId, 15_000)
  const after = sqliteOf(dbOf(s.app)).prepare('select count(*) as n from webhook_deliveries where webhook_id = ?').get(hookA.id) as { n: number }
  assert.equal(after.n, before, 'no delivery for the revoked key\'s endpoint')
})
