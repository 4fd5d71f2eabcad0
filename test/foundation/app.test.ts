import { test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { buildApp } from '../../src/app.js'
import { build, testConfig, TEST_API_KEY } from '../helper.js'

test('health answers in the envelope with the key in either header form', async (t) => {
  const { app } = await build(t)
  for (const headers of [{ 'x-api-key': TEST_API_KEY }, { authorization: `Bearer ${TEST_API_KEY}` }]) {
    const res = await app.inject({ method: 'GET', url: '/api/health', headers })
    assert.equal(res.statusCode, 200)
    const body = res.json()
    assert.equal(body.success, true)
    assert.equal(body.data.status, 'healthy')
    assert.ok(!Number.isNaN(Date.parse(body.data.timestamp)))
    assert.equal(typeof body.data.uptime, 'number')
    assert.match(body.data.version, /^\d+\.\d+\.\d+/)
  }
})

test('a missing or wrong key is refused with 401 in the envelope', async (t) => {
  const { app } = await build(t)
  const cases: Array<Record<string, string>> = [
    {},
    { 'x-api-key': 'wrong-key-wrong-key-wrong' },
    { 'x-api-key': TEST_API_KEY.slice(0, -1) },
    { authorization: `Basic ${TEST_API_KEY}` },
    { authorization: 'Bearer ' }
  ]
  for (const headers of cases) {
    const res = await app.inject({ method: 'GET', url: '/api/stats', headers })
    assert.equal(res.statusCode, 401, JSON.stringify(headers))
    assert.deepEqual(res.json(), { success: false, error: 'Unauthorized' })
  }
})

test('unknown routes answer 404 in the envelope', async (t) => {
  const { api, app } = await build(t)
  const res = await api({ method: 'GET', url: '/api/does-not-exist' })
  assert.equal(res.statusCode, 404)
  assert.deepEqual(res.json(), { success: false, error: 'Route not found' })
  const outside = await app.inject({ method: 'POST', url: '/nowhere' })
  assert.equal(outside.statusCode, 404)
  assert.deepEqual(outside.json(), { success: false, error: 'Route not found' })
})

test('malformed JSON and wrong content types answer 4xx in the envelope', async (t) => {
  const { api } = await build(t)
  const bad = await api({ method: 'POST', url: '/api/sessions', headers: { 'content-type': 'application/json' }, payload: '{"sessionId": ' })
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().success, false)
  assert.equal(typeof bad.json().error, 'string')
  const weird = await api({ method: 'POST', url: '/api/sessions', headers: { 'content-type': 'application/x-unknown' }, payload: 'x' })
  assert.ok(weird.statusCode >= 400 && weird.statusCode < 500, String(weird.statusCode))
  assert.equal(weird.json().success, false)
})

test('the rate limit answers 429 with Retry-After, also for unknown routes', async (t) => {
  const { api } = await build(t, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' })
  for (let i = 0; i < 3; i++) assert.equal((await api({ method: 'GET', url: '/api/health' })).statusCode, 200)
  const limited = await api({ method: 'GET', url: '/api/health' })
  assert.equal(limited.statusCode, 429)
  assert.equal(limited.json().success, false)
  assert.match(limited.json().error, /^Too many requests, retry in \d+ seconds$/)
  assert.ok(Number(limited.headers['retry-after']) > 0)
  const notFound = await api({ method: 'GET', url: '/api/unknown' })
  assert.equal(notFound.statusCode, 429)
})

test('unauthenticated requests count against the rate limit too', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '2' })
  for (let i = 0; i < 2; i++) assert.equal((await app.inject({ url: '/api/health' })).statusCode, 401)
  assert.equal((await app.inject({ url: '/api/health' })).statusCode, 429)
})

test('an unexpected error is logged with its request id and masked as Internal server error', async (t) => {
  const { config, dir } = testConfig()
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const lines: string[] = []
  const stream = { write: (line: string) => { lines.push(line) } }
  const app = await buildApp(config, { logger: { level: 'error', stream } })
  t.after(async () => { await app.close() })
  app.get('/boom', { config: { public: true } }, async () => { throw new Error('secret database detail') })
  const res = await app.inject({ url: '/boom' })
  assert.equal(res.statusCode, 500)
  assert.deepEqual(res.json(), { success: false, error: 'Internal server error' })
  const logged = lines.map((l) => JSON.parse(l) as { reqId?: string, err?: { message: string } }).find((l) => l.err?.message === 'secret database detail')
  assert.ok(logged, 'the error is logged in full')
  assert.ok(logged.reqId, 'with the request id')
})
