import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { buildApp, serviceApp } from '../../src/app.js'
import { TEST_API_KEY, testConfig } from '../helper.js'

// Every route declares the key it needs on itself (`config.scope`, plugins/keys/route-scope.ts). Until issue 34
// one method+URL table decided it (a file of plugins/keys/ since removed); this is that table's answer for every route the
// service served when it went, so a route that lost or changed its scope, or a new one nobody listed here, fails.
const OLD_TABLE: ReadonlyArray<[string, string]> = [
  ['GET /api/health', 'any'],
  ['GET /api/stats', 'read'],
  ['GET /api/cluster', 'admin'],
  ['GET /api/storage', 'admin'],
  ['POST /api/sessions', 'manage'],
  ['GET /api/sessions', 'read'],
  ['DELETE /api/sessions/:sessionId', 'manage'],
  ['POST /api/sessions/:sessionId/restart', 'manage'],
  ['PUT /api/sessions/:sessionId/phone-number', 'manage'],
  ['GET /api/sessions/:sessionId/connection-status', 'read'],
  ['GET /api/sessions/:sessionId/pairing-code', 'read'],
  ['POST /api/sessions/:sessionId/request-pairing-code', 'manage'],
  ['GET /api/sessions/:sessionId/qr-code', 'read'],
  ['POST /api/upload-image', 'send'],
  ['POST /api/upload-video', 'send'],
  // the old table's default for writes; issue 42 gave it the scope of the other uploads
  ['POST /api/upload-audio', 'send'],
  ['POST /api/sessions/:sessionId/send-status', 'send'],
  ['GET /api/sessions/:sessionId/sent-statuses', 'read'],
  ['GET /api/sessions/:sessionId/status-viewers/:statusId', 'read'],
  ['GET /api/sessions/:sessionId/status-reactions/:statusId', 'read'],
  ['GET /api/sessions/:sessionId/status-replies/:statusId', 'read'],
  ['DELETE /api/sessions/:sessionId/delete-status/:statusId', 'send'],
  ['POST /api/webhooks', 'manage'],
  ['GET /api/webhooks', 'read'],
  ['GET /api/webhooks/:id', 'read'],
  ['PATCH /api/webhooks/:id', 'manage'],
  ['DELETE /api/webhooks/:id', 'manage'],
  ['POST /api/webhooks/:id/rotate-secret', 'manage'],
  ['GET /api/webhooks/:id/deliveries', 'read'],
  ['POST /api/webhooks/:id/deliveries/:deliveryId/retry', 'manage'],
  ['POST /api/keys', 'admin'],
  ['GET /api/keys', 'admin'],
  ['GET /api/keys/me', 'any'],
  ['DELETE /api/keys/:id', 'admin'],
  ['GET /api/events', 'read'],
  ['POST /api/sessions/:sessionId/scheduled-statuses', 'manage'],
  ['GET /api/sessions/:sessionId/scheduled-statuses', 'read'],
  ['GET /api/sessions/:sessionId/scheduled-statuses/:scheduleId', 'read'],
  ['PATCH /api/sessions/:sessionId/scheduled-statuses/:scheduleId', 'manage'],
  ['POST /api/sessions/:sessionId/scheduled-statuses/:scheduleId/pause', 'manage'],
  ['POST /api/sessions/:sessionId/scheduled-statuses/:scheduleId/resume', 'manage'],
  ['DELETE /api/sessions/:sessionId/scheduled-statuses/:scheduleId', 'manage'],
  ['GET /api/sessions/:sessionId/statuses/:statusId/report', 'read'],
  ['GET /api/sessions/:sessionId/contacts', 'read'],
  ['GET /api/sessions/:sessionId/insights', 'read'],
  ['GET /api/sessions/:sessionId/insights/contacts', 'read'],
  ['GET /api/sessions/:sessionId/status-privacy', 'read'],
  ['GET /api/sessions/:sessionId/contact-statuses', 'read'],
  ['GET /api/sessions/:sessionId/contact-statuses/:statusId', 'read'],
  ['GET /api/sessions/:sessionId/contact-statuses/:statusId/media', 'read'],
  ['POST /api/sessions/:sessionId/contact-statuses/:statusId/view', 'send'],
  ['POST /api/sessions/:sessionId/contact-statuses/:statusId/like', 'send'],
  ['DELETE /api/sessions/:sessionId/contact-statuses/:statusId/like', 'send'],
  ['POST /api/sessions/:sessionId/contact-statuses/:statusId/reply', 'send'],
  ['POST /api/sessions/:sessionId/audiences', 'manage'],
  ['GET /api/sessions/:sessionId/audiences', 'read'],
  ['GET /api/sessions/:sessionId/audiences/:audienceId', 'read'],
  ['PUT /api/sessions/:sessionId/audiences/:audienceId', 'manage'],
  ['PATCH /api/sessions/:sessionId/audiences/:audienceId', 'manage'],
  ['DELETE /api/sessions/:sessionId/audiences/:audienceId', 'manage']
]

// The HEAD twin Fastify adds for each GET shares its GET's declaration. The old table answered three of them
// differently from their GET, by its method rule: HEAD /api/cluster and /api/storage `read` (their GET:
// admin), HEAD /api/keys/me `admin` (its GET: any key). They now follow their GET.

// Where each route is answered in cluster mode (`config.placement`), as the preHandlers copied onto them said.
const PLACEMENTS: ReadonlyArray<[string, string]> = [
  ['POST /api/sessions', 'least-loaded'],
  ['DELETE /api/sessions/:sessionId', 'owner'],
  ['POST /api/sessions/:sessionId/restart', 'owner'],
  ['PUT /api/sessions/:sessionId/phone-number', 'owner'],
  ['GET /api/sessions/:sessionId/connection-status', 'owner'],
  ['GET /api/sessions/:sessionId/pairing-code', 'owner'],
  ['POST /api/sessions/:sessionId/request-pairing-code', 'owner'],
  ['GET /api/sessions/:sessionId/qr-code', 'owner'],
  ['POST /api/sessions/:sessionId/send-status', 'owner'],
  // only with ?revoke=true (config.placementIf)
  ['DELETE /api/sessions/:sessionId/delete-status/:statusId', 'owner'],
  ['GET /api/sessions/:sessionId/contact-statuses/:statusId/media', 'owner'],
  ['POST /api/sessions/:sessionId/contact-statuses/:statusId/view', 'owner'],
  ['POST /api/sessions/:sessionId/contact-statuses/:statusId/like', 'owner'],
  ['DELETE /api/sessions/:sessionId/contact-statuses/:statusId/like', 'owner'],
  ['POST /api/sessions/:sessionId/contact-statuses/:statusId/reply', 'owner']
]

/** The app as production builds it, with every route it registers (an onRoute hook ahead of all of its own). */
async function routesOf (t: TestContext): Promise<Map<string, RouteOptions>> {
  const { config, dir } = testConfig()
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const app = Fastify()
  const routes = new Map<string, RouteOptions>()
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.set(`${method} ${route.url}`, route)
  })
  await app.register(fp(serviceApp), { config })
  t.after(async () => { await app.close() })
  await app.ready()
  return routes
}

test('every route declares the scope the old table gave it, or is public outside /api', async (t) => {
  const routes = await routesOf(t)
  const expected = new Map(OLD_TABLE)
  const declared = new Map<string, unknown>()
  for (const [name, route] of routes) {
    const [method, url] = name.split(' ')
    if (!url.startsWith('/api/')) {
      assert.equal(route.config?.public, true, `${name} is outside /api and not public`)
      assert.equal(route.config?.scope, undefined, `${name} is public and declares a scope`)
      continue
    }
    if (method === 'HEAD') {
      const get = routes.get(`GET ${url}`)
      assert.ok(get !== undefined, `${name} has no GET`)
      assert.equal(route.config?.scope, get.config?.scope, `${name} differs from its GET`)
      continue
    }
    declared.set(name, route.config?.scope)
  }
  assert.deepEqual(Object.fromEntries([...declared].sort()), Object.fromEntries([...expected].sort()))
  // the public ones are the dashboard, the docs and /metrics
  const publicOnes = [...routes].filter(([, r]) => r.config?.public === true).map(([name]) => name.split(' ')[1])
  assert.ok(publicOnes.includes('/'))
  assert.ok(publicOnes.includes('/docs/json'))
  assert.ok(publicOnes.includes('/metrics'))
})

test('every route with a scope refuses a request without a key (its key check is attached, wherever it was registered)', async (t) => {
  const routes = await routesOf(t)
  const { config, dir } = testConfig()
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const app = await buildApp(config)
  t.after(async () => { await app.close() })
  let checked = 0
  for (const [name, route] of routes) {
    if (route.config?.scope === undefined) continue
    const [method, url] = name.split(' ')
    const res = await app.inject({ method: method as 'GET', url: url.replaceAll(/:[A-Za-z]+/g, 'x1') })
    assert.equal(res.statusCode, 401, `${name} answered ${res.statusCode} without a key`)
    checked++
  }
  assert.ok(checked >= OLD_TABLE.length, `${checked} routes checked`)
})

test('docs/keys.md\'s scope table names every route that needs `send`, as `METHOD path`', async (t) => {
  const routes = await routesOf(t)
  const row = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'keys.md'), 'utf8').split('\n').find((l) => l.startsWith('| `send` |'))
  assert.ok(row !== undefined, 'keys.md has a row for send')
  const send = [...routes].filter(([name, r]) => !name.startsWith('HEAD ') && r.config?.scope === 'send').map(([name]) => name)
  assert.ok(send.length >= 5, `the send routes are found (${send.length})`)
  // written as the docs write paths: {param}, and a session's routes from `…/`
  const missing = send.map((name) => name.replace(/:([A-Za-z]+)/g, '{$1}').replace(' /api/sessions/{sessionId}/', ' …/'))
    .filter((written) => !row.includes('`' + written + '`'))
  assert.deepEqual(missing, [], 'routes with scope send missing from the send row of docs/keys.md#scopes')
})

test('the routes that need the session\'s node declare their placement, and only they', async (t) => {
  const routes = await routesOf(t)
  const placed = [...routes].filter(([name, r]) => !name.startsWith('HEAD ') && r.config?.placement !== undefined)
    .map(([name, r]) => [name, r.config?.placement])
  assert.deepEqual(Object.fromEntries(placed.sort()), Object.fromEntries([...PLACEMENTS].sort()))
  const revoke = routes.get('DELETE /api/sessions/:sessionId/delete-status/:statusId')?.config?.placementIf
  assert.ok(revoke !== undefined)
  assert.equal(revoke({ query: { revoke: true } } as never), true)
  assert.equal(revoke({ query: { revoke: false } } as never), false)
})

/** The service's app with one more route added as a plugin would, before it starts. */
async function withRoute (t: TestContext, add: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const { config, dir } = testConfig()
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const app = await buildApp(config)
  t.after(async () => { await app.close() })
  await app.register(async (api) => { add(api) }, { prefix: '/api' })
  return app
}

test('a route that declares no scope and is not public stops the start (fail closed)', async (t) => {
  const app = await withRoute(t, (api) => { api.get('/forgotten', async () => ({ success: true })) })
  await assert.rejects(async () => { await app.ready() }, /GET \/api\/forgotten declares no scope/)
})

test('a scope that does not exist stops the start', async (t) => {
  const app = await withRoute(t, (api) => { api.post('/typo', { config: { scope: 'sned' as never } }, async () => ({ success: true })) })
  await assert.rejects(async () => { await app.ready() }, /POST \/api\/typo declares an unknown scope "sned"/)
})

test('a declared scope is what the request is checked against, wherever the route is registered', async (t) => {
  // outside the app's own /api plugin: the check is the route's, not a prefix's
  const app = await withRoute(t, (api) => {
    api.get('/only-admin', { config: { scope: 'admin' } }, async () => ({ success: true, data: 'admin' }))
    api.post('/send-like', { config: { scope: 'send' } }, async () => ({ success: true, data: 'sent' }))
  })
  app.get('/elsewhere', { config: { scope: 'read' } }, async () => ({ success: true, data: 'read' }))
  await app.ready()
  const admin = { 'x-api-key': TEST_API_KEY }
  for (const url of ['/api/only-admin', '/elsewhere']) {
    const none = await app.inject({ method: 'GET', url })
    assert.deepEqual([none.statusCode, none.json()], [401, { success: false, error: 'Unauthorized' }], url)
  }
  assert.equal((await app.inject({ method: 'GET', url: '/elsewhere', headers: admin })).statusCode, 200)
  const created = await app.inject({ method: 'POST', url: '/api/keys', headers: admin, payload: { name: 'reader', sessions: '*', scopes: ['read'] } })
  assert.equal(created.statusCode, 200, created.body)
  const reader = { 'x-api-key': created.json<{ data: { key: string } }>().data.key }
  assert.equal((await app.inject({ method: 'GET', url: '/api/only-admin', headers: admin })).statusCode, 200)
  const refused = await app.inject({ method: 'GET', url: '/api/only-admin', headers: reader })
  assert.deepEqual([refused.statusCode, refused.json()], [403, { success: false, error: 'This route needs the admin key' }])
  const lacking = await app.inject({ method: 'POST', url: '/api/send-like', headers: reader })
  assert.deepEqual([lacking.statusCode, lacking.json()], [403, { success: false, error: 'This key lacks the send scope' }])
})
