import { test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { Writable } from 'node:stream'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { buildApp } from '../../src/app.js'
import { build, TEST_API_KEY, testConfig } from '../helper.js'
import { SYNC_THRESHOLD } from '../../plugins/compress/index.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

test('x-request-id: a sane one is echoed on every answer (200, 401, 404, 429) and is the reqId of the log lines', async (t) => {
  const { config, dir } = testConfig({ RATE_LIMIT_MAX: '3' })
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk: Buffer, _enc, done) { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done() } })
  // the request lines are debug lines (none at info: next test)
  const app = await buildApp(config, { logger: { level: 'debug', stream } })
  t.after(async () => { await app.close() })
  const cases: Array<[string, Record<string, string>, number]> = [
    ['GET /api/health', { 'x-api-key': TEST_API_KEY }, 200],
    ['GET /api/health', {}, 401],
    ['GET /api/nothing-here', { 'x-api-key': TEST_API_KEY }, 404],
    ['GET /api/health', { 'x-api-key': TEST_API_KEY }, 429]
  ]
  for (const [i, [route, headers, code]] of cases.entries()) {
    const id = `client-req.${i}:a_b-c`
    const [method, url] = route.split(' ')
    const res = await app.inject({ method: method as 'GET', url, headers: { ...headers, 'x-request-id': id } })
    assert.equal(res.statusCode, code, `${route} → ${code}`)
    assert.equal(res.headers['x-request-id'], id, `${code} echoes the id`)
    const logged = lines.filter((l) => l.reqId === id)
    assert.ok(logged.some((l) => l.msg === 'incoming request') && logged.some((l) => l.msg === 'request completed'), `log lines of ${code} carry reqId ${id}`)
  }
})

test('at the default level (info) a request writes no log line', async (t) => {
  const { config, dir } = testConfig({})
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk: Buffer, _enc, done) { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); done() } })
  const app = await buildApp(config, { logger: { level: 'info', stream } })
  t.after(async () => { await app.close() })
  await app.ready()
  const before = lines.length
  for (const headers of [{ 'x-api-key': TEST_API_KEY }, {}]) {
    const res = await app.inject({ method: 'GET', url: '/api/health', headers: { ...headers, 'x-request-id': 'quiet-1' } })
    assert.ok(res.statusCode === 200 || res.statusCode === 401)
  }
  assert.deepEqual(lines.slice(before).filter((l) => l.reqId === 'quiet-1'), [])
})

test('x-request-id: also on answers the router gives before any hook (a malformed URL)', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ method: 'GET', url: '/api/sessions/%E0%A4%A/qr-code', headers: { 'x-request-id': 'bad-url-1' } })
  assert.equal(res.statusCode, 400)
  assert.equal(res.headers['x-request-id'], 'bad-url-1')
})

test('x-request-id: generated (a UUID) when absent or not sane, and never reused between requests', async (t) => {
  const { app } = await build(t)
  const ids = new Set<string>()
  for (const given of [undefined, 'has space', 'x'.repeat(129), 'semi;colon', '']) {
    const res = await app.inject({ method: 'GET', url: '/favicon.svg', headers: given === undefined ? {} : { 'x-request-id': given } })
    const id = res.headers['x-request-id']
    assert.equal(typeof id, 'string')
    assert.match(id as string, UUID, `replaces ${JSON.stringify(given)}`)
    ids.add(id as string)
  }
  assert.equal(ids.size, 5)
  const longest = 'y'.repeat(128)
  assert.equal((await app.inject({ method: 'GET', url: '/favicon.svg', headers: { 'x-request-id': longest } })).headers['x-request-id'], longest)
})

test('CORS: no CORS headers by default', async (t) => {
  const { app, api } = await build(t)
  const res = await api({ method: 'GET', url: '/api/health', headers: { origin: 'https://crm.example' } })
  assert.equal(res.statusCode, 200)
  assert.equal(res.headers['access-control-allow-origin'], undefined)
  const preflight = await app.inject({ method: 'OPTIONS', url: '/api/sessions', headers: { origin: 'https://crm.example', 'access-control-request-method': 'POST' } })
  assert.equal(preflight.headers['access-control-allow-origin'], undefined)
})

test('CORS_ORIGIN list: listed origins get CORS headers (preflight included, without the key), others none', async (t) => {
  const { app, api } = await build(t, { CORS_ORIGIN: 'https://crm.example, http://localhost:8080' })
  const ok = await api({ method: 'GET', url: '/api/health', headers: { origin: 'http://localhost:8080' } })
  assert.equal(ok.headers['access-control-allow-origin'], 'http://localhost:8080')
  assert.match(String(ok.headers['access-control-expose-headers']), /x-request-id/)
  assert.match(String(ok.headers.vary), /origin/i)
  const other = await api({ method: 'GET', url: '/api/health', headers: { origin: 'https://evil.example' } })
  assert.equal(other.statusCode, 200)
  assert.equal(other.headers['access-control-allow-origin'], undefined)
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/api/sessions/abc',
    headers: { origin: 'https://crm.example', 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'x-api-key,content-type' }
  })
  assert.equal(preflight.statusCode, 204)
  assert.equal(preflight.headers['access-control-allow-origin'], 'https://crm.example')
  assert.match(String(preflight.headers['access-control-allow-methods']), /DELETE/)
  assert.match(String(preflight.headers['access-control-allow-headers']), /x-api-key/)
})

test('CORS_ORIGIN=*: any origin', async (t) => {
  const { api } = await build(t, { CORS_ORIGIN: '*' })
  const res = await api({ method: 'GET', url: '/api/stats', headers: { origin: 'https://anywhere.example' } })
  assert.equal(res.headers['access-control-allow-origin'], '*')
})

test('compression: the dashboard files and the OpenAPI document come back br or gzip when asked, plain otherwise', async (t) => {
  const { app } = await build(t)
  for (const url of ['/', '/app.js', '/styles.css', '/docs/json']) {
    const plain = await app.inject({ method: 'GET', url })
    assert.equal(plain.statusCode, 200, url)
    assert.equal(plain.headers['content-encoding'], undefined, `${url} plain without Accept-Encoding`)
    const gz = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } })
    assert.equal(gz.headers['content-encoding'], 'gzip', url)
    assert.equal(gunzipSync(gz.rawPayload).toString(), plain.body, `${url} gunzips to the same body`)
    const br = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, deflate, br' } })
    assert.equal(br.headers['content-encoding'], 'br', url)
    assert.equal(brotliDecompressSync(br.rawPayload).toString(), plain.body, `${url} unbrotlis to the same body`)
    assert.ok(br.rawPayload.length < plain.rawPayload.length, `${url} is smaller compressed`)
  }
  const doc = await app.inject({ method: 'GET', url: '/docs/json', headers: { 'accept-encoding': 'gzip' } })
  assert.equal(JSON.parse(gunzipSync(doc.rawPayload).toString()).openapi, '3.0.3')
  const ui = await app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js', headers: { 'accept-encoding': 'gzip' } })
  assert.equal(ui.statusCode, 200)
  assert.equal(ui.headers['content-encoding'], 'gzip', 'the OpenAPI UI too')
})

test('compression: a JSON answer of tens of kilobytes is compressed in one call (an exact content-length), not through a stream', async (t) => {
  const { app } = await build(t)
  // the OpenAPI document: over the library's own limit for one call on two cores (8 KiB), under ours
  const plain = await app.inject({ method: 'GET', url: '/docs/json' })
  assert.ok(plain.rawPayload.length > 8192 && plain.rawPayload.length <= SYNC_THRESHOLD, `the document is ${plain.rawPayload.length} bytes`)
  for (const encoding of ['gzip', 'br']) {
    const res = await app.inject({ method: 'GET', url: '/docs/json', headers: { 'accept-encoding': encoding } })
    assert.equal(res.headers['content-encoding'], encoding)
    // a stream's answer has no content-length (it is sent chunked)
    assert.equal(res.headers['content-length'], String(res.rawPayload.length), `${encoding}: compressed in one call`)
    const body = encoding === 'gzip' ? gunzipSync(res.rawPayload) : brotliDecompressSync(res.rawPayload)
    assert.equal(body.toString(), plain.body)
  }
})

test('compression: /metrics is compressed for scrapers that ask', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ method: 'GET', url: '/metrics', headers: { 'x-api-key': TEST_API_KEY, 'accept-encoding': 'gzip' } })
  assert.equal(res.statusCode, 200)
  assert.equal(res.headers['content-encoding'], 'gzip')
  assert.match(gunzipSync(res.rawPayload).toString(), /^# HELP /)
})
