import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { test } from 'node:test'
import pg from 'pg'
import { Webhook } from 'standardwebhooks'
import { build, testConfig, waitFor, type TestApp } from '../helper.js'
import { DELIVERY_RETENTION_MS, retryDelay } from '../../plugins/webhooks/index.js'
import { guardedLookup, isNonPublicAddress } from '../../src/webhooks/address-guard.js'
import { sendWebhook } from '../../src/webhooks/sender.js'
import { validateEnv } from '../../src/config.js'
import { startReceiver } from './receiver.js'
import { dialectEnv, dialectTest } from '../support/db-matrix.js'

// Webhook endpoints through the HTTP API, and their deliveries to receivers on 127.0.0.1. Events are
// emitted on the domain event bus (what the services do); the broadcaster writes the outbox. The delivery
// tests run on SQLite and on PostgreSQL.

/** receivers are on loopback; retries in milliseconds */
const FAST = { ALLOW_PRIVATE_URLS: 'true', WEBHOOK_BASE_DELAY_MS: '20', WEBHOOK_MAX_DELAY_MS: '100', WEBHOOK_MAX_ATTEMPTS: '100', WEBHOOK_TIMEOUT_MS: '2000' }

interface Hook {
  id: string
  url: string
  events: string[] | null
  sessionId: string | null
  description: string | null
  enabled: boolean
  disabledReason: string | null
  createdAt: string
  updatedAt: string
  secret?: string
}
interface Delivery {
  id: string
  messageId: string
  eventType: string
  sessionId: string | null
  status: string
  attempts: number
  lastStatusCode: number | null
  lastError: string | null
  nextAttemptAt: string | null
  createdAt: string
  completedAt: string | null
}

async function ok<T> (s: TestApp, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>): Promise<T> {
  const res = await s.api({ method, url, ...(payload !== undefined ? { payload } : {}) })
  assert.equal(res.statusCode, 200, `${method} ${url}: ${res.body}`)
  const body = res.json<{ success: boolean, data: T }>()
  assert.equal(body.success, true)
  return body.data
}

async function failure (s: TestApp, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: Record<string, unknown>): Promise<{ status: number, error: string }> {
  const res = await s.api({ method, url, ...(payload !== undefined ? { payload } : {}) })
  const body = res.json<{ success: boolean, error: string }>()
  assert.equal(body.success, false, res.body)
  return { status: res.statusCode, error: body.error }
}

const deliveries = async (s: TestApp, id: string, query = ''): Promise<{ deliveries: Delivery[], nextCursor: string | null }> =>
  await ok(s, 'GET', `/api/webhooks/${id}/deliveries${query}`)

test('webhook CRUD: the secret is shown on creation and rotation only; validation names the field; unknown ids are 404', async (t) => {
  const s = await build(t, FAST)
  const created = await ok<Hook>(s, 'POST', '/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['status-sent', 'status-viewers-update'], sessionId: 'main', description: 'CRM' })
  assert.match(created.id, /^wh_/)
  assert.match(created.secret ?? '', /^whsec_[A-Za-z0-9+/]{32}$/)
  assert.equal(Buffer.from((created.secret ?? '').slice(6), 'base64').length, 24)
  assert.deepEqual({ ...created, secret: undefined, id: undefined, createdAt: undefined, updatedAt: undefined }, {
    id: undefined, url: 'http://127.0.0.1:9/hook', events: ['status-sent', 'status-viewers-update'], sessionId: 'main', description: 'CRM', enabled: true, disabledReason: null, secret: undefined, createdAt: undefined, updatedAt: undefined
  })

  const one = await ok<Hook>(s, 'GET', `/api/webhooks/${created.id}`)
  assert.equal(one.secret, undefined, 'never shown again')
  const list = await ok<Hook[]>(s, 'GET', '/api/webhooks')
  assert.deepEqual(list.map((h) => h.id), [created.id])
  assert.equal(list[0].secret, undefined)

  const patched = await ok<Hook>(s, 'PATCH', `/api/webhooks/${created.id}`, { url: 'http://127.0.0.1:10/other', events: null, enabled: false, description: null })
  assert.deepEqual([patched.url, patched.events, patched.enabled, patched.description, patched.sessionId], ['http://127.0.0.1:10/other', null, false, null, 'main'])

  const rotated = await ok<Hook>(s, 'POST', `/api/webhooks/${created.id}/rotate-secret`)
  assert.match(rotated.secret ?? '', /^whsec_/)
  assert.notEqual(rotated.secret, created.secret)

  const all = await ok<Hook>(s, 'POST', '/api/webhooks', { url: 'https://example.com/x' })
  assert.deepEqual([all.events, all.sessionId, all.description], [null, null, null], 'no events: every event, every session')

  // validation
  assert.deepEqual(await failure(s, 'POST', '/api/webhooks', { url: 'http://127.0.0.1:9/', events: ['status-sent', 'nope'] }),
    { status: 400, error: `body.events.1 must be one of: ${['connection-status', 'pairing-code', 'pairing-code-error', 'qr-code', 'qr-code-error', 'status-sent', 'status-send-progress', 'status-viewers-update', 'status-viewers-added', 'status-reaction', 'status-reply', 'status-deleted', 'contact-status', 'contact-status-mention', 'statuses-updated', 'scheduled-status-fired', 'scheduled-status-failed', 'session-created', 'session-deleted'].join(', ')}` })
  assert.deepEqual(await failure(s, 'POST', '/api/webhooks', {}), { status: 400, error: 'body.url is required' })
  assert.equal((await failure(s, 'POST', '/api/webhooks', { url: 'ftp://example.com/x' })).error, 'body.url must match pattern "^[Hh][Tt][Tt][Pp][Ss]?://"')
  assert.deepEqual(await failure(s, 'POST', '/api/webhooks', { url: 'http://exa mple.com:99999/' }), { status: 400, error: 'body.url is not a valid URL' })
  assert.deepEqual(await failure(s, 'POST', '/api/webhooks', { url: 'http://user:pw@example.com/' }), { status: 400, error: 'body.url must not contain a user name or password' })
  assert.match((await failure(s, 'POST', '/api/webhooks', { url: 'http://example.com/', sessionId: 'bad id' })).error, /^body\.sessionId may contain only/)
  assert.equal((await failure(s, 'POST', '/api/webhooks', { url: 'http://example.com/', events: [] })).error, 'body.events must NOT have fewer than 1 items')
  assert.equal((await failure(s, 'POST', '/api/webhooks', { url: 'http://example.com/', secret: 'mine' })).error, 'body.secret is not an allowed field')
  assert.equal((await failure(s, 'PATCH', `/api/webhooks/${created.id}`, {})).status, 400)
  assert.equal((await failure(s, 'PATCH', `/api/webhooks/${created.id}`, { sessionId: 'x' })).error, 'body.sessionId is not an allowed field')
  assert.equal((await failure(s, 'GET', `/api/webhooks/${created.id}/deliveries?status=lost`)).status, 400)

  // unknown ids
  for (const [method, url, payload] of [
    ['GET', '/api/webhooks/wh_nope'], ['PATCH', '/api/webhooks/wh_nope', { enabled: true }], ['DELETE', '/api/webhooks/wh_nope'],
    ['POST', '/api/webhooks/wh_nope/rotate-secret'], ['GET', '/api/webhooks/wh_nope/deliveries'], ['POST', '/api/webhooks/wh_nope/deliveries/1/retry']
  ] as const) {
    assert.deepEqual(await failure(s, method, url, payload), { status: 404, error: 'Webhook not found' }, `${method} ${url}`)
  }
  assert.deepEqual(await failure(s, 'POST', `/api/webhooks/${created.id}/deliveries/12345/retry`), { status: 404, error: 'Delivery not found' })

  assert.deepEqual(await ok(s, 'DELETE', `/api/webhooks/${created.id}`), { id: created.id, message: 'Webhook deleted' })
  assert.deepEqual(await failure(s, 'GET', `/api/webhooks/${created.id}`), { status: 404, error: 'Webhook not found' })
  assert.equal((await s.app.inject({ method: 'GET', url: '/api/webhooks' })).statusCode, 401, 'the key is needed')
})

test('private and loopback targets are refused unless ALLOW_PRIVATE_URLS=true', async (t) => {
  const s = await build(t)
  for (const url of ['http://127.0.0.1:3000/hook', 'http://localhost/hook', 'http://api.localhost/x', 'http://[::1]/hook', 'http://10.1.2.3/', 'http://192.168.1.10/', 'http://169.254.169.254/latest/meta-data', 'http://[::ffff:127.0.0.1]/', 'http://0.0.0.0/']) {
    const { status, error } = await failure(s, 'POST', '/api/webhooks', { url })
    assert.equal(status, 400, url)
    assert.match(error, /^body\.url points to (a private or loopback address|localhost).*ALLOW_PRIVATE_URLS=true/, url)
  }
  const hook = await ok<Hook>(s, 'POST', '/api/webhooks', { url: 'https://93.184.215.14/hook' })
  assert.match((await failure(s, 'PATCH', `/api/webhooks/${hook.id}`, { url: 'http://127.0.0.1/' })).error, /^body\.url points to a private/)

  for (const a of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.0.1', '100.64.0.1', '169.254.1.1', '0.0.0.0', '224.0.0.1', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '2002:a00:1::', 'not-an-ip']) {
    assert.equal(isNonPublicAddress(a), true, a)
  }
  for (const a of ['93.184.215.14', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) assert.equal(isNonPublicAddress(a), false, a)

  // at connect time: a name is checked against every address it resolves to
  const lookup = async (allow: boolean, all: boolean): Promise<unknown> => await new Promise((resolve) => {
    guardedLookup(allow)('localhost', { all }, (err, address) => { resolve(err ?? address) })
  })
  const refusedLookup = await lookup(false, false)
  assert.ok(refusedLookup instanceof Error)
  assert.match(refusedLookup.message, /^localhost resolves to a private or loopback address \((127\.0\.0\.1|::1)\)$/)
  assert.match(String(await lookup(true, false)), /^(127\.0\.0\.1|::1)$/)
  assert.ok(Array.isArray(await lookup(true, true)))
  // and the sender refuses before connecting
  const result = await sendWebhook({ url: 'http://127.0.0.1:9/x', secret: 'whsec_' + Buffer.alloc(24).toString('base64'), messageId: 'msg_1', body: '{}', allowPrivate: false, connectTimeoutMs: 1000, totalTimeoutMs: 1000, userAgent: 'test' })
  assert.deepEqual(result, { ok: false, statusCode: null, error: 'refused: the URL points to a private or loopback address (127.0.0.1); set ALLOW_PRIVATE_URLS=true for development' })
})

dialectTest('a subscribed event reaches the receiver signed by Standard Webhooks, filtered by event name and session', async (t, dialect) => {
  const s = await build(t, { ...FAST, ...await dialectEnv(dialect) })
  const rx = await startReceiver(t)
  const all = await ok<Hook>(s, 'POST', '/api/webhooks', { url: rx.url })
  const only = await ok<Hook>(s, 'POST', '/api/webhooks', { url: rx.url + '?only', events: ['status-deleted'], sessionId: 'main' })

  s.app.domainEvents.emit('session-created', { sessionId: 'main', sessionName: 'Main', phoneNumber: null, authMethod: 'qrcode', createdAt: new Date().toISOString() })
  s.app.domainEvents.emit('status-deleted', { sessionId: 'other', statusId: '7' })
  s.app.domainEvents.emit('status-deleted', { sessionId: 'main', statusId: '8' })
  await rx.waitForAccepted(4)
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.equal(rx.requests.length, 4, 'nothing else was sent')

  const toAll = rx.accepted().filter((r) => r.path === '/hook')
  const toOnly = rx.accepted().filter((r) => r.path === '/hook?only')
  const received = toAll.map((r) => ({ ...r, json: new Webhook(all.secret ?? '').verify(r.body, r.headers) as typeof r.json }))
  assert.deepEqual(received.map((r) => r.json.type).sort(), ['session-created', 'status-deleted', 'status-deleted'])
  const onlyOnes = toOnly.map((r) => new Webhook(only.secret ?? '').verify(r.body, r.headers) as typeof r.json)
  // the event log's id, at the top and in the data (as socket.io clients get it): the third event logged
  assert.deepEqual(onlyOnes, [{ type: 'status-deleted', timestamp: onlyOnes[0].timestamp, eventId: 3, data: { sessionId: 'main', statusId: '8', eventId: 3 } }])
  assert.throws(() => { new Webhook(only.secret ?? '').verify(toAll[0].body, toAll[0].headers) }, 'another endpoint\'s secret does not verify')

  const first = received.find((r) => r.json.type === 'session-created')
  assert.ok(first !== undefined)
  assert.match(first.headers['webhook-id'], /^msg_/)
  assert.match(first.headers['webhook-timestamp'], /^[0-9]{10}$/)
  assert.match(first.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/)
  assert.equal(first.headers['content-type'], 'application/json')
  assert.match(first.headers['user-agent'], /^StatusTracker-Webhooks\//)
  assert.deepEqual(Object.keys(first.json), ['type', 'timestamp', 'eventId', 'data'])
  assert.equal(first.json.data.sessionName, 'Main')
  assert.throws(() => { new Webhook(all.secret ?? '').verify(first.body.replace('Main', 'Mallory'), first.headers) }, 'a changed body fails verification')

  const page = await deliveries(s, all.id)
  assert.equal(page.deliveries.length, 3)
  assert.ok(page.deliveries.every((d) => d.status === 'succeeded' && d.attempts === 1 && d.lastStatusCode === 200 && d.lastError === null && d.nextAttemptAt === null && d.completedAt !== null))
  assert.deepEqual(page.deliveries.map((d) => d.eventType), ['status-deleted', 'status-deleted', 'session-created'], 'newest first')
})

dialectTest('events no endpoint takes are passed over without their payloads; the taken ones between them keep their own', async (t, dialect) => {
  const s = await build(t, { ...FAST, ...await dialectEnv(dialect) })
  const rx = await startReceiver(t)
  const only = await ok<Hook>(s, 'POST', '/api/webhooks', { url: rx.url, events: ['status-deleted'], sessionId: 'main' })
  // one page of the fan-out: taken events (3 and 5) among events nobody takes; each body must be its own event's
  s.app.domainEvents.emit('session-created', { sessionId: 'main', sessionName: 'Main', phoneNumber: null, authMethod: 'qrcode', createdAt: new Date().toISOString() })
  s.app.domainEvents.emit('status-deleted', { sessionId: 'other', statusId: '7' })
  s.app.domainEvents.emit('status-deleted', { sessionId: 'main', statusId: '8' })
  s.app.domainEvents.emit('session-deleted', { sessionId: 'gone' })
  s.app.domainEvents.emit('status-deleted', { sessionId: 'main', statusId: '9' })
  await rx.waitForAccepted(2)
  await new Promise((resolve) => setTimeout(resolve, 100))
  const got = rx.accepted().map((r) => new Webhook(only.secret ?? '').verify(r.body, r.headers) as { eventId: number, data: Record<string, unknown> })
    .sort((a, b) => a.eventId - b.eventId)
  assert.deepEqual(got.map((g) => [g.eventId, g.data]), [[3, { sessionId: 'main', statusId: '8', eventId: 3 }], [5, { sessionId: 'main', statusId: '9', eventId: 5 }]])
  assert.equal(rx.requests.length, 2, 'nothing else was sent')
})

dialectTest('a receiver that is down, then failing, then back gets every delivery, in order per status', async (t, dialect) => {
  const s = await build(t, { ...FAST, ...await dialectEnv(dialect) })
  const rx = await startReceiver(t, 503)
  const hook = await ok<Hook>(s, 'POST', '/api/webhooks', { url: rx.url })
  await rx.down()

  const emitStatus = (statusId: string, n: number): void => {
    s.app.domainEvents.emit('status-send-progress', { sessionId: 'main', statusId, sent: n, total: 10 })
  }
  for (let n = 1; n <= 5; n++) { emitStatus('1', n); emitStatus('2', n) }
  // not listening: attempts fail with connection refused and are retried
  const refused = await waitFor(async () => (await deliveries(s, hook.id, '?status=pending')).deliveries.find((d) => d.attempts >= 2), 10_000, 'a retried delivery')
  assert.equal(refused.lastError, 'connection refused')
  assert.equal(refused.lastStatusCode, null)
  const pendingNow = await deliveries(s, hook.id)
  // only the head of each status's queue is tried; the later ones wait for it
  const tried = pendingNow.deliveries.filter((d) => d.attempts > 0).map((d) => d.id).sort()
  assert.deepEqual(tried, tried.slice(0, 2))
  assert.equal(pendingNow.deliveries.filter((d) => d.attempts > 0).length, 2)

  // listening but answering 503
  await rx.up()
  await waitFor(() => rx.requests.length >= 3, 10_000, 'attempts against the 503 receiver')
  // the outcome is written just after the answer arrives
  const failing = await waitFor(async () => (await deliveries(s, hook.id, '?status=pending')).deliveries.find((d) => d.lastStatusCode === 503), 5000, 'a 503 outcome recorded')
  assert.match(failing?.lastError ?? '', /^HTTP 503 Service Unavailable: no thanks \(503\)$/)

  rx.mode = 200
  await rx.waitForAccepted(10)
  await waitFor(async () => (await deliveries(s, hook.id, '?status=succeeded')).deliveries.length === 10, 5000, 'every delivery succeeded')
  const got = rx.verified(hook.secret ?? '')
  for (const statusId of ['1', '2']) {
    assert.deepEqual(got.filter((j) => j.data.statusId === statusId).map((j) => j.data.sent), [1, 2, 3, 4, 5], `status ${statusId} in order`)
  }
  // each delivery once accepted, its message id unchanged across attempts
  const ids = rx.accepted().map((r) => r.headers['webhook-id'])
  assert.equal(new Set(ids).size, 10)
  const attemptsOfFirst = rx.requests.filter((r) => r.headers['webhook-id'] === ids[0]).length
  assert.ok(attemptsOfFirst >= 1)
})

dialectTest('410 Gone disables the endpoint; after the last attempt a delivery is failed, stays listed and can be retried', async (t, dialect) => {
  const s = await build(t, { ...FAST, WEBHOOK_MAX_ATTEMPTS: '3', ...await dialectEnv(dialect) })
  const gone = await startReceiver(t, 410)
  const flaky = await startReceiver(t, 500)
  const goneHook = await ok<Hook>(s, 'POST', '/api/webhooks', { url: gone.url })
  const flakyHook = await ok<Hook>(s, 'POST', '/api/webhooks', { url: flaky.url })

  // one session's events go out one after another: the second waits while the first meets the 410
  s.app.domainEvents.emit('statuses-updated', { sessionId: 'a', message: 'first' })
  s.app.domainEvents.emit('statuses-updated', { sessionId: 'a', message: 'second' })
  const disabled = await waitFor(async () => { const h = await ok<Hook>(s, 'GET', `/api/webhooks/${goneHook.id}`); return h.enabled ? undefined : h }, 10_000, 'the endpoint to be disabled')
  assert.match(disabled.disabledReason ?? '', /^The receiver answered 410 Gone at /)
  const goneDeliveries = await waitFor(async () => { const d = (await deliveries(s, goneHook.id)).deliveries; return d.some((x) => x.status === 'failed') ? d : undefined }, 5000, 'the 410 delivery failed')
  const failed410 = goneDeliveries.find((d) => d.status === 'failed')
  assert.equal(failed410?.lastStatusCode, 410)
  assert.match(failed410?.lastError ?? '', /^HTTP 410 Gone.*\(endpoint disabled\)$/)
  assert.equal(gone.requests.length, 1, 'nothing more to a gone endpoint')

  // 500 three times → failed, listed with its attempts
  const failedOnes = await waitFor(async () => { const d = (await deliveries(s, flakyHook.id, '?status=failed')).deliveries; return d.length === 2 ? d : undefined }, 10_000, 'two failed deliveries')
  assert.ok(failedOnes.every((d) => d.attempts === 3 && d.lastStatusCode === 500 && d.nextAttemptAt === null))
  assert.equal(flaky.requests.length, 6)

  // new events skip the disabled endpoint
  s.app.domainEvents.emit('session-deleted', { sessionId: 'c' })
  await waitFor(async () => (await deliveries(s, flakyHook.id)).deliveries.length === 3, 5000, 'the third delivery')
  assert.equal((await deliveries(s, goneHook.id)).deliveries.length, 2, 'the disabled endpoint gets no new deliveries')

  // retry: a fresh schedule, sent now
  flaky.mode = 204
  const retried = await ok<Delivery>(s, 'POST', `/api/webhooks/${flakyHook.id}/deliveries/${failedOnes[0].id}/retry`)
  assert.equal(retried.status === 'pending' || retried.status === 'sending' || retried.status === 'succeeded', true)
  await waitFor(async () => (await deliveries(s, flakyHook.id, '?status=succeeded')).deliveries.some((d) => d.id === failedOnes[0].id), 5000, 'the retried delivery to succeed')
  // a succeeded delivery can be replayed: same message id
  const replayId = failedOnes[0].id
  const before = flaky.accepted().length
  await ok<Delivery>(s, 'POST', `/api/webhooks/${flakyHook.id}/deliveries/${replayId}/retry`)
  // the third delivery's own retry may land meanwhile (its receiver answers 204 now): the replay is the request
  // after `before` carrying the retried delivery's message id, which had already succeeded
  const replayed = await waitFor(() => flaky.accepted().slice(before).find((r) => r.headers['webhook-id'] === failedOnes[0].messageId), 5000, 'the replay')
  assert.equal(replayed.headers['webhook-id'], failedOnes[0].messageId)

  // enabling again resumes the endpoint
  await ok<Hook>(s, 'PATCH', `/api/webhooks/${goneHook.id}`, { enabled: true })
  gone.mode = 200
  s.app.domainEvents.emit('session-deleted', { sessionId: 'd' })
  await gone.waitForAccepted(2, 5000)
  assert.deepEqual(gone.accepted().map((r) => r.json.data.message ?? r.json.data.sessionId), ['second', 'd'], 'the pending one, then the new one')
})

test('an event that happened before its endpoint was disabled is still its own: held, then delivered when enabled again [postgres]', async (t) => {
  const env = await dialectEnv('postgres')
  const s = await build(t, { ...FAST, ...env })
  const rx = await startReceiver(t, 200)
  const hook = await ok<Hook>(s, 'POST', '/api/webhooks', { url: rx.url })
  // another node holds the dispatch cursor (deliveries are made from the log after its commit), as it may
  // while this node's worker meets a 410; the endpoint is disabled meanwhile
  const other = new pg.Client({ connectionString: env.DATABASE_URL })
  await other.connect()
  t.after(async () => { await other.end() })
  await other.query('begin')
  await other.query("select last_id from event_cursors where name = 'webhooks' for update")
  s.app.domainEvents.emit('session-deleted', { sessionId: 'before' })
  await waitFor(async () => Number((await other.query('select count(*) as n from event_log')).rows[0].n) === 1, 5000, 'the event logged')
  await ok<Hook>(s, 'PATCH', `/api/webhooks/${hook.id}`, { enabled: false })
  await other.query('commit')
  const held = await waitFor(async () => (await deliveries(s, hook.id)).deliveries[0], 5000, 'the delivery of the earlier event')
  assert.equal(held.status, 'pending')
  // a later event is not the disabled endpoint's
  s.app.domainEvents.emit('session-deleted', { sessionId: 'after' })
  await waitFor(async () => Number((await other.query("select last_id from event_cursors where name = 'webhooks'")).rows[0].last_id) === 2, 5000, 'the later event dispatched')
  assert.equal((await deliveries(s, hook.id)).deliveries.length, 1)
  assert.equal(rx.requests.length, 0, 'nothing goes to a disabled endpoint')
  await ok<Hook>(s, 'PATCH', `/api/webhooks/${hook.id}`, { enabled: true })
  await rx.waitForAccepted(1, 5000)
  assert.deepEqual(rx.accepted().map((r) => r.json.data.sessionId), ['before'])
})

dialectTest('delivery listing pages with limit and cursor, filters by status; old rows are pruned after 7 days', async (t, dialect) => {
  const s = await build(t, { ...FAST, WEBHOOK_BASE_DELAY_MS: '600000', WEBHOOK_MAX_DELAY_MS: '600000', ...await dialectEnv(dialect) })
  const rx = await startReceiver(t, 503)
  const hook = await ok<Hook>(s, 'POST', '/api/webhooks', { url: rx.url, events: ['session-deleted'] })
  for (let i = 0; i < 5; i++) s.app.domainEvents.emit('session-deleted', { sessionId: `s${i}` })
  await waitFor(() => rx.requests.length === 5, 5000, 'five first attempts')
  await waitFor(async () => (await deliveries(s, hook.id)).deliveries.every((d) => d.attempts === 1), 5000, 'attempts recorded')
  const p1 = await deliveries(s, hook.id, '?limit=2')
  assert.equal(p1.deliveries.length, 2)
  assert.ok(p1.nextCursor !== null)
  const p2 = await deliveries(s, hook.id, `?limit=2&cursor=${p1.nextCursor}`)
  const p3 = await deliveries(s, hook.id, `?limit=2&cursor=${p2.nextCursor ?? ''}`)
  assert.equal(p3.nextCursor, null)
  const ids = [...p1.deliveries, ...p2.deliveries, ...p3.deliveries].map((d) => Number(d.id))
  assert.deepEqual(ids, [...ids].sort((a, b) => b - a))
  assert.equal(new Set(ids).size, 5)
  const pending = (await deliveries(s, hook.id, '?status=pending')).deliveries
  assert.equal(pending.length, 5)
  const next = new Date(pending[0].nextAttemptAt ?? 0).getTime()
  assert.ok(next - Date.now() > 400_000, 'the next attempt follows the configured delay (with jitter)')
  assert.equal((await deliveries(s, hook.id, '?status=succeeded')).deliveries.length, 0)

  assert.equal(await s.app.webhooks.prune(Date.now() + DELIVERY_RETENTION_MS - 60_000), 0)
  assert.equal(await s.app.webhooks.prune(Date.now() + DELIVERY_RETENTION_MS + 60_000), 5)
  assert.equal((await deliveries(s, hook.id)).deliveries.length, 0)
})

test('WEBHOOK_RETENTION_HOURS sets how long delivery rows are kept', async (t) => {
  const s = await build(t, { ...FAST, WEBHOOK_BASE_DELAY_MS: '600000', WEBHOOK_MAX_DELAY_MS: '600000', WEBHOOK_RETENTION_HOURS: '1.5' })
  const rx = await startReceiver(t, 503)
  const hook = await ok<Hook>(s, 'POST', '/api/webhooks', { url: rx.url, events: ['session-deleted'] })
  for (let i = 0; i < 2; i++) s.app.domainEvents.emit('session-deleted', { sessionId: `s${i}` })
  await waitFor(async () => (await deliveries(s, hook.id)).deliveries.filter((d) => d.attempts === 1).length === 2, 5000, 'two attempts recorded')
  assert.equal(await s.app.webhooks.prune(Date.now() + 90 * 60_000 - 60_000), 0, 'kept for an hour and a half')
  assert.equal(await s.app.webhooks.prune(Date.now() + 90 * 60_000 + 60_000), 2, 'not for seven days')
  assert.deepEqual((await deliveries(s, hook.id)).deliveries, [])
})

test('a receiver that never answers times out and is retried', async (t) => {
  const s = await build(t, { ...FAST, WEBHOOK_TIMEOUT_MS: '300', WEBHOOK_MAX_ATTEMPTS: '2' })
  const rx = await startReceiver(t, 'hang')
  const hook = await ok<Hook>(s, 'POST', '/api/webhooks', { url: rx.url })
  s.app.domainEvents.emit('session-deleted', { sessionId: 'x' })
  const d = await waitFor(async () => (await deliveries(s, hook.id, '?status=failed')).deliveries[0], 10_000, 'the delivery to fail')
  assert.equal(d.attempts, 2)
  assert.equal(d.lastError, 'no answer within 300 ms')
  assert.equal(rx.requests.length, 2)
})

test('webhook settings are validated at start', (t) => {
  assert.throws(() => validateEnv({ WEBHOOK_MAX_ATTEMPTS: '0' }), /^ConfigError: Invalid setting WEBHOOK_MAX_ATTEMPTS: expected integer to be greater or equal to 1 \(got "0"\)$/)
  assert.throws(() => validateEnv({ ALLOW_PRIVATE_URLS: 'maybe' }), /Invalid setting ALLOW_PRIVATE_URLS/)
  const env = validateEnv({})
  const { ALLOW_PRIVATE_URLS, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_BASE_DELAY_MS, WEBHOOK_MAX_DELAY_MS, WEBHOOK_TIMEOUT_MS, WEBHOOK_CONCURRENCY } = env
  assert.deepEqual([ALLOW_PRIVATE_URLS, WEBHOOK_MAX_ATTEMPTS, WEBHOOK_BASE_DELAY_MS, WEBHOOK_MAX_DELAY_MS, WEBHOOK_TIMEOUT_MS, WEBHOOK_CONCURRENCY],
    [false, 12, 5000, 43_200_000, 10_000, 8])
  const { config, dir } = testConfig({ WEBHOOK_BASE_DELAY_MS: '250', WEBHOOK_MAX_DELAY_MS: '100', ALLOW_PRIVATE_URLS: 'true' })
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  assert.equal(config.allowPrivateUrls, true)
  assert.deepEqual(config.webhooks, { maxAttempts: 12, baseDelayMs: 250, maxDelayMs: 250, timeoutMs: 10_000, concurrency: 8, retentionMs: 7 * 24 * 3_600_000 }, 'the longest delay is at least the first; deliveries kept 168 h by default')
})

test('retry schedule: about 5 s to 12 h over 12 attempts, with jitter', () => {
  const schedule = { maxAttempts: 12, baseDelayMs: 5000, maxDelayMs: 43_200_000 }
  const mid = Array.from({ length: 11 }, (_, i) => retryDelay(i + 1, schedule, () => 0.5))
  assert.equal(mid[0], 5000)
  assert.equal(mid[10], 43_200_000)
  for (let i = 1; i < mid.length; i++) assert.ok(mid[i] > mid[i - 1])
  const total = mid.reduce((a, b) => a + b, 0)
  assert.ok(total > 15 * 3_600_000 && total < 25 * 3_600_000, `${total / 3_600_000} h in all`)
  assert.equal(retryDelay(1, schedule, () => 0), 4000)
  assert.equal(retryDelay(1, schedule, () => 1), 6000)
  assert.equal(retryDelay(30, schedule, () => 0.5), 43_200_000, 'capped')
})
