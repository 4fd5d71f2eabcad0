import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build, TEST_API_KEY } from '../helper.js'
import { findChromium, openBrowser, skipWithoutChromium } from '../dashboard/browser.js'

// Issue 12, point 8: security headers on every response (API, errors, docs, dashboard); the dashboard's
// content security policy as strict as before; /docs still loads.

const DASHBOARD_CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"
]

function directives (csp: string | undefined): Map<string, string> {
  const out = new Map<string, string>()
  for (const part of (csp ?? '').split(';')) {
    const [name, ...values] = part.trim().split(/\s+/)
    if (name !== '') out.set(name, values.join(' '))
  }
  return out
}

test('helmet: security headers on API answers, errors, 404s, the docs and the dashboard', async (t) => {
  const { app } = await build(t)
  const responses = {
    'api 200': await app.inject({ url: '/api/health', headers: { 'x-api-key': TEST_API_KEY } }),
    'api 401': await app.inject({ url: '/api/health' }),
    'api 400': await app.inject({ url: '/api/sessions/bad.id/qr-code', headers: { 'x-api-key': TEST_API_KEY } }),
    '404': await app.inject({ url: '/nowhere' }),
    'docs json': await app.inject({ url: '/docs/json' }),
    dashboard: await app.inject({ url: '/' }),
    'dashboard js': await app.inject({ url: '/app.js' })
  }
  for (const [what, res] of Object.entries(responses)) {
    assert.equal(res.headers['x-content-type-options'], 'nosniff', what)
    assert.ok(res.headers['content-security-policy'], `${what}: content-security-policy`)
    assert.ok(res.headers['x-frame-options'], `${what}: x-frame-options`)
    assert.ok(res.headers['referrer-policy'], `${what}: referrer-policy`)
    assert.ok(res.headers['cross-origin-opener-policy'], `${what}: cross-origin-opener-policy`)
    assert.ok(res.headers['strict-transport-security'], `${what}: strict-transport-security`)
    assert.equal(res.headers['x-powered-by'], undefined, what)
  }
})

test('helmet: the dashboard keeps its strict content security policy', async (t) => {
  const { app } = await build(t)
  for (const url of ['/', '/app.js', '/index.html']) {
    const res = await app.inject({ url })
    assert.equal(res.statusCode, 200, url)
    const csp = directives(res.headers['content-security-policy'] as string)
    for (const d of DASHBOARD_CSP) {
      const [name, ...values] = d.split(' ')
      assert.equal(csp.get(name), values.join(' '), `${url}: ${name}`)
    }
    for (const value of csp.values()) assert.doesNotMatch(value, /unsafe-inline|unsafe-eval|\*/, `${url}: ${value}`)
  }
})

test('helmet: /docs (swagger-ui) still loads with its assets', async (t) => {
  const { app } = await build(t)
  const page = await app.inject({ url: '/docs/' })
  assert.equal(page.statusCode, 200)
  assert.match(page.body, /swagger-ui/)
  const csp = directives(page.headers['content-security-policy'] as string)
  assert.ok(csp.size > 0, 'the docs page has a policy')
  const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]).filter((u) => !u.startsWith('http') && !u.startsWith('data:'))
  assert.ok(assets.length >= 3, assets.join(','))
  for (const asset of assets) {
    const res = await app.inject({ url: new URL(asset, 'http://x/docs/').pathname })
    assert.equal(res.statusCode, 200, asset)
  }
  const init = await app.inject({ url: '/docs/static/swagger-initializer.js' })
  assert.equal(init.statusCode, 200)
  assert.match(init.body, /docs\/json|\.\/json/)
  // every inline script in the page is allowed by the page's policy (hashes or nonces)
  const inline = [...page.body.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].filter((m) => m[1].trim() !== '')
  if (inline.length > 0) assert.match(csp.get('script-src') ?? '', /sha256-|nonce-/)
  assert.equal((await app.inject({ url: '/docs/json' })).json<{ openapi: string }>().openapi, '3.0.3')
})

test('helmet: /docs renders every operation in a real browser under its policy, with no CSP violation', { skip: skipWithoutChromium, timeout: 60_000 }, async (t) => {
  const { listen } = await build(t)
  const base = await listen()
  const browser = await openBrowser(t, findChromium() ?? '/usr/bin/chromium')
  const violations: string[] = []
  browser.page.on('console', (msg) => { if (/Content Security Policy|Refused to/i.test(msg.text())) violations.push(msg.text()) })
  await browser.page.goto(`${base}/docs/`)
  await browser.page.locator('.opblock').nth(17).waitFor({ state: 'attached' })
  const operations = await browser.page.locator('.opblock').count()
  assert.ok(operations >= 18, `operations shown: ${operations}`)
  assert.deepEqual(violations, [])
  assert.deepEqual(browser.errors.filter((e) => !/favicon/.test(e)), [])
})
