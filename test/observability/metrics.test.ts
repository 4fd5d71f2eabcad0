import { test } from 'node:test'
import assert from 'node:assert/strict'
import { build, TEST_API_KEY, waitFor, type TestApp } from '../helper.js'
import { parsePrometheus, sampleValue, type Family } from './prometheus.js'

async function scrape (t: TestApp, headers: Record<string, string> = { authorization: `Bearer ${TEST_API_KEY}` }): Promise<Map<string, Family>> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics', headers })
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8')
  return parsePrometheus(res.body)
}

const APP_FAMILIES: Array<[string, string]> = [
  ['status_tracker_http_request_duration_seconds', 'histogram'],
  ['status_tracker_sessions', 'gauge'],
  ['status_tracker_statuses_total', 'counter'],
  ['status_tracker_status_recipients_total', 'counter'],
  ['status_tracker_status_send_duration_seconds', 'histogram'],
  ['status_tracker_receipts_total', 'counter'],
  ['status_tracker_receipt_commit_latency_seconds', 'histogram'],
  ['status_tracker_socketio_clients', 'gauge'],
  ['status_tracker_client_expiry_timestamp_seconds', 'gauge'],
  ['status_tracker_webhook_deliveries_total', 'counter'],
  ['status_tracker_webhook_queue_depth', 'gauge']
]

test('/metrics: Prometheus text that a strict parser accepts, with every service family and the process metrics', async (t) => {
  const app = await build(t)
  const families = await scrape(app)
  for (const [name, type] of APP_FAMILIES) assert.equal(families.get(name)?.type, type, name)
  // the default process metrics: CPU, memory, event-loop lag
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds']) {
    assert.ok(families.has(name), name)
  }
  // label values exist from the start, at 0
  for (const state of ['sent', 'partial', 'failed']) assert.equal(sampleValue(families, 'status_tracker_statuses_total', { state }), 0)
  for (const kind of ['read', 'played', 'delivery']) assert.equal(sampleValue(families, 'status_tracker_receipts_total', { kind }), 0)
  for (const state of ['open', 'connecting', 'close', 'logged-out']) assert.equal(sampleValue(families, 'status_tracker_sessions', { state }), 0)
})

test('/metrics needs the API key (x-api-key or Bearer) and counts against the rate limit', async (t) => {
  const app = await build(t, { RATE_LIMIT_MAX: '3' })
  const none = await app.app.inject({ method: 'GET', url: '/metrics' })
  assert.equal(none.statusCode, 401)
  assert.deepEqual(none.json(), { success: false, error: 'Unauthorized' })
  const wrong = await app.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer not-the-key-at-all' } })
  assert.equal(wrong.statusCode, 401)
  await scrape(app, { 'x-api-key': TEST_API_KEY })
  const limited = await app.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TEST_API_KEY}` } })
  assert.equal(limited.statusCode, 429)
  assert.match(limited.json<{ error: string }>().error, /^Too many requests, retry in \d+ seconds$/)
})

test('METRICS_PUBLIC=true: /metrics answers without the key and is not rate-limited; the API still needs the key', async (t) => {
  const app = await build(t, { METRICS_PUBLIC: 'true', RATE_LIMIT_MAX: '2' })
  for (let i = 0; i < 4; i++) await scrape(app, {})
  assert.equal((await app.app.inject({ method: 'GET', url: '/api/health' })).statusCode, 401)
  const doc = (await app.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, { get: { security?: unknown[] } }> }>()
  assert.deepEqual(doc.paths['/metrics'].get.security, [])
})

test('HTTP requests move the duration histogram, labelled by route pattern (never the raw URL) and status code', async (t) => {
  const app = await build(t)
  const count = (families: Map<string, Family>, route: string, code: string, method = 'GET') =>
    sampleValue(families, 'status_tracker_http_request_duration_seconds_count', { method, route, status_code: code }) ?? 0
  const before = await scrape(app)
  for (const id of ['one', 'two', 'three']) assert.equal((await app.api({ method: 'GET', url: `/api/sessions/${id}/connection-status` })).statusCode, 404)
  assert.equal((await app.api({ method: 'GET', url: '/api/health' })).statusCode, 200)
  assert.equal((await app.app.inject({ method: 'GET', url: '/api/health' })).statusCode, 401)
  assert.equal((await app.api({ method: 'GET', url: '/no/such/thing' })).statusCode, 404)
  const after = await scrape(app)
  assert.equal(count(after, '/api/sessions/:sessionId/connection-status', '404') - count(before, '/api/sessions/:sessionId/connection-status', '404'), 3)
  assert.equal(count(after, '/api/health', '200') - count(before, '/api/health', '200'), 1)
  assert.equal(count(after, '/api/health', '401') - count(before, '/api/health', '401'), 1)
  assert.equal(count(after, 'unmatched', '404'), 1)
  const routes = new Set(after.get('status_tracker_http_request_duration_seconds')?.samples.map((s) => s.labels.route))
  for (const raw of ['/api/sessions/one/connection-status', '/no/such/thing']) assert.ok(!routes.has(raw), `no series for the raw URL ${raw}`)
  assert.ok((sampleValue(after, 'status_tracker_http_request_duration_seconds_sum', { route: '/api/health', status_code: '200' }) ?? 0) > 0)
})

test('every app has its own registry: two apps in one process count separately', async (t) => {
  const a = await build(t)
  const b = await build(t)
  await a.api({ method: 'GET', url: '/api/stats' })
  await a.api({ method: 'GET', url: '/api/stats' })
  const route = { method: 'GET', route: '/api/stats', status_code: '200' }
  assert.equal(sampleValue(await scrape(a), 'status_tracker_http_request_duration_seconds_count', route), 2)
  assert.equal(sampleValue(await scrape(b), 'status_tracker_http_request_duration_seconds_count', route), undefined)
})

test('socket.io clients and the webhook numbers other plugins set appear at scrape time', async (t) => {
  const app = await build(t)
  app.app.metrics.onScrape(() => { app.app.metrics.webhookQueueDepth.set(7) })
  app.app.metrics.webhookDeliveries.inc({ result: 'success' }, 2)
  const families = await scrape(app)
  assert.equal(sampleValue(families, 'status_tracker_webhook_queue_depth'), 7)
  assert.equal(sampleValue(families, 'status_tracker_webhook_deliveries_total', { result: 'success' }), 2)
  assert.equal(sampleValue(families, 'status_tracker_socketio_clients'), 0)
})

test('a metrics source that throws is skipped: the scrape still answers', async (t) => {
  const app = await build(t)
  app.app.metrics.onScrape(() => { throw new Error('source down') })
  const families = await scrape(app)
  assert.ok(families.has('status_tracker_sessions'))
})

test('the strict parser refuses what Prometheus would refuse', () => {
  assert.throws(() => parsePrometheus('x 1\n'), /before any # TYPE/)
  assert.throws(() => parsePrometheus('# TYPE x counter\nx 1\nx 2\n'), /twice/)
  assert.throws(() => parsePrometheus('# TYPE x counter\nx{a="1} 1\n'), /unterminated/)
  assert.throws(() => parsePrometheus('# TYPE x counter\nx one\n'), /bad value/)
  assert.throws(() => parsePrometheus('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'), /cumulative/)
  assert.throws(() => parsePrometheus('# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n'), /!= _count/)
  assert.throws(() => parsePrometheus('# TYPE x counter\nx 1'), /newline/)
  const ok = parsePrometheus('# HELP x a "thing"\n# TYPE x counter\nx{a="q\\"\\\\\\n",b="2"} 1.5e3\n')
  assert.deepEqual(ok.get('x')?.samples, [{ name: 'x', labels: { a: 'q"\\\n', b: '2' }, value: 1500 }])
})

test('statuses that end partial or failed, and webhook attempts by result, move their counters', async (t) => {
  const app = await build(t)
  const events = app.app.domainEvents
  events.emit('statuses-updated', { sessionId: 's', statusId: '1', action: 'partial', message: 'stopped' })
  events.emit('statuses-updated', { sessionId: 's', statusId: '2', action: 'failed', message: 'rejected' })
  events.emit('statuses-updated', { sessionId: 's', statusId: '3', action: 'send-failed', message: 'nobody' })
  events.emit('statuses-updated', { sessionId: 's', action: 'cleanup', message: 'expired' })
  // listeners hear an event once its commit is fed from the log: after emit returns
  let families = await waitFor(async () => { const f = await scrape(app); return sampleValue(f, 'status_tracker_statuses_total', { state: 'failed' }) === 2 ? f : undefined }, 5000, 'the counters moved')
  assert.equal(sampleValue(families, 'status_tracker_statuses_total', { state: 'partial' }), 1)
  assert.equal(sampleValue(families, 'status_tracker_statuses_total', { state: 'failed' }), 2)
  assert.equal(sampleValue(families, 'status_tracker_statuses_total', { state: 'sent' }), 0)

  const real = app.app.webhooks.stats
  let attempts = { succeeded: 3, retried: 1, failed: 0, gone: 0 }
  app.app.webhooks.stats = async () => ({ ...await real(), pending: 4, attempts })
  families = await scrape(app)
  assert.equal(sampleValue(families, 'status_tracker_webhook_queue_depth', {}), 4)
  assert.equal(sampleValue(families, 'status_tracker_webhook_deliveries_total', { result: 'success' }), 3)
  attempts = { succeeded: 5, retried: 1, failed: 1, gone: 0 }
  families = await scrape(app)
  assert.equal(sampleValue(families, 'status_tracker_webhook_deliveries_total', { result: 'success' }), 5, 'only what was added since the last scrape is counted')
  assert.equal(sampleValue(families, 'status_tracker_webhook_deliveries_total', { result: 'retry' }), 1)
  assert.equal(sampleValue(families, 'status_tracker_webhook_deliveries_total', { result: 'failed' }), 1)
})
