import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build, TEST_API_KEY } from '../helper.js'
import { counter, type Store } from '../../plugins/keys/limits.js'

// Issue 12, point 3: the limit is decided by the route a request reaches (after percent-decoding), not by
// the raw URL's prefix, and wrong-key attempts count like any other request.

test('rate limit: percent-encoded /api paths are limited like /api (/%61pi/stats)', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '60000' })
  const first = await app.inject({ url: '/%61pi/stats', headers: { 'x-api-key': TEST_API_KEY } })
  assert.equal(first.statusCode, 200, 'the encoded path reaches the /api/stats route')
  const codes: number[] = []
  for (let i = 0; i < 10; i++) codes.push((await app.inject({ url: '/%61pi/stats', headers: { 'x-api-key': TEST_API_KEY } })).statusCode)
  assert.ok(codes.includes(429), `never limited: ${codes.join(',')}`)
  assert.equal(codes.filter((c) => c === 200).length, 4)
  const res = await app.inject({ url: '/api/health', headers: { 'x-api-key': TEST_API_KEY } })
  assert.equal(res.statusCode, 429, 'the encoded and plain spellings share one budget')
  assert.match(res.json<{ error: string }>().error, /^Too many requests/)
})

test('rate limit: wrong-key attempts through an encoded path count and end in 429', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '60000' })
  const counts = new Map<number, number>()
  for (let i = 0; i < 60; i++) {
    const url = ['/%61pi/stats', '/%61%70%69/health', '/api/%73tats', '/api/stats'][i % 4]
    const res = await app.inject({ url, headers: { 'x-api-key': `wrong-key-${i}-0123456789abcdef` } })
    counts.set(res.statusCode, (counts.get(res.statusCode) ?? 0) + 1)
    assert.equal(res.json<{ success: boolean }>().success, false)
  }
  assert.equal(counts.get(401), 20, JSON.stringify([...counts]))
  assert.equal(counts.get(429), 40, JSON.stringify([...counts]))
})

test('rate limit: the dashboard and the docs stay outside the limit', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '60000' })
  for (let i = 0; i < 5; i++) {
    assert.equal((await app.inject({ url: '/' })).statusCode, 200)
    assert.equal((await app.inject({ url: '/docs/json' })).statusCode, 200)
  }
})

test('rate limit: requests that match no route share the address\'s budget with /api (429 with retry-after); /metrics keeps its own', async (t) => {
  const { app } = await build(t, { RATE_LIMIT_MAX: '2', RATE_LIMIT_WINDOW_MS: '60000' })
  const headers = { 'x-api-key': TEST_API_KEY }
  const first = await app.inject({ url: '/api/no-such-route', headers })
  assert.equal(first.statusCode, 404)
  assert.equal(first.headers['x-ratelimit-limit'], '2')
  assert.equal(first.headers['x-ratelimit-remaining'], '1')
  assert.equal((await app.inject({ url: '/api/health', headers })).statusCode, 200)
  const over = await app.inject({ url: '/api/no-such-route', headers })
  assert.equal(over.statusCode, 429)
  assert.equal(over.headers['x-ratelimit-remaining'], '0')
  assert.equal(over.headers['retry-after'], '60')
  assert.match(over.json<{ error: string }>().error, /^Too many requests, retry in 60 seconds$/)
  assert.equal((await app.inject({ url: '/api/health', headers })).statusCode, 429)
  const metrics = await app.inject({ url: '/metrics', headers })
  assert.equal(metrics.statusCode, 200, 'its own count')
  assert.equal(metrics.headers['x-ratelimit-remaining'], '1')
})

// The per-request counter fails closed: a store that does not answer at once (or answers with an error) is
// over the limit, never the count an earlier request left behind.
test('rate limit counter: a store that never answers, or answers with an error, is over the limit', () => {
  const max = 3
  let answers = 2
  const flaky: Store = {
    incr: (_key, cb, timeWindow) => {
      if (answers-- > 0) cb(null, { current: 1, ttl: timeWindow })
    }
  }
  const count = counter(max, 60_000, flaky)
  assert.equal(count('a').current, 1)
  assert.equal(count('a').current, 1)
  const silent = count('a')
  assert.ok(silent.current > max, `no answer reused a stale count: ${silent.current}`)
  assert.equal(silent.ttl, 60_000)

  const failing = counter(max, 60_000, { incr: (_key, cb) => { cb(new Error('store down'), { current: 0, ttl: 0 }) } })
  assert.ok(failing('a').current > max, 'an error answer is over the limit')

  let later: (() => void) | undefined
  const late = counter(max, 60_000, { incr: (_key, cb, timeWindow) => { later = () => { cb(null, { current: 1, ttl: timeWindow }) } } })
  assert.ok(late('a').current > max, 'an answer after the call is not taken')
  later?.()
  assert.ok(late('a').current > max, 'nor the late answer by the next call')
})

test('rate limit counter: the real store counts up to the limit and over it, per key', () => {
  const count = counter(2, 60_000)
  assert.deepEqual([count('a').current, count('a').current, count('a').current, count('b').current], [1, 2, 3, 1])
})
