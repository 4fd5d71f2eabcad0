import { test } from 'node:test'
import { storesOf } from '../../src/db/stores/index.js'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/connection.js'
import { CHECK_TIMEOUT_MS, createHealth, databaseCheck } from '../../plugins/health/index.js'
import { build, waitFor, type TestApp } from '../helper.js'
import { insertSession } from '../support/sessions.js'
import { dbOf } from '../support/db.js'

interface HealthBody {
  status: 'healthy' | 'degraded'
  timestamp: string
  uptime: number
  version: string
  checks: Record<string, Record<string, unknown>>
}

async function health (app: TestApp): Promise<HealthBody> {
  const res = await app.api({ method: 'GET', url: '/api/health' })
  assert.equal(res.statusCode, 200, 'degraded or not, health answers 200')
  return res.json<{ data: HealthBody }>().data
}

async function addSession (app: TestApp, id: string, linked: boolean): Promise<void> {
  await insertSession(app.app, id, { ownNumber: linked ? '4915100000001' : null, linked })
}

test('health keeps its fields and adds checks: database (a real query, with latency) and sessions by state', async (t) => {
  const app = await build(t)
  const h = await health(app)
  assert.equal(h.status, 'healthy')
  assert.ok(!Number.isNaN(Date.parse(h.timestamp)))
  assert.equal(typeof h.uptime, 'number')
  assert.match(h.version, /^\d+\.\d+\.\d+/)
  assert.deepEqual(Object.keys(h.checks), ['database', 'sessions', 'platform', 'webhooks'])
  assert.deepEqual(h.checks.webhooks, { pending: 0, failing: 0 })
  assert.equal(h.checks.database.ok, true)
  assert.equal(typeof h.checks.database.latencyMs, 'number')
  assert.deepEqual(h.checks.sessions, { total: 0, connected: 0, connecting: 0, disconnected: 0, loggedOut: 0, disconnectedTooLong: [] })
})

test('a linked session not connected for longer than HEALTH_DISCONNECTED_MS makes the service degraded; unlinked ones do not', async (t) => {
  const app = await build(t, { HEALTH_DISCONNECTED_MS: '200' })
  await addSession(app, 'never-linked', false)
  assert.equal((await health(app)).status, 'healthy')
  await addSession(app, 'linked', true)
  const h = await waitFor(async () => { const b = await health(app); return b.status === 'degraded' ? b : undefined }, 5000, 'degraded')
  assert.deepEqual(h.checks.sessions, { total: 2, connected: 0, connecting: 0, disconnected: 2, loggedOut: 0, disconnectedTooLong: ['linked'] })
  assert.equal(h.checks.database.ok, true)
  await dbOf(app.app).db.deleteFrom('sessions').where('id', '=', 'linked').execute()
  assert.equal((await health(app)).status, 'healthy')
})

test('webhooks shows its outbox numbers (reported, not degrading); a check that throws shows its error and degrades', async (t) => {
  const app = await build(t)
  let stats = { pending: 3, failing: 0 }
  const real = app.app.webhooks.stats
  app.app.webhooks.stats = async () => ({ ...await real(), ...stats })
  let h = await health(app)
  assert.equal(h.status, 'healthy')
  assert.deepEqual(h.checks.webhooks, { pending: 3, failing: 0 })
  stats = { pending: 3, failing: 2 }
  h = await health(app)
  assert.equal(h.status, 'healthy', 'a receiver that refuses deliveries does not make the service degraded')
  assert.deepEqual(h.checks.webhooks, { pending: 3, failing: 2 })
  assert.throws(() => { app.app.health.register('webhooks', async () => ({ healthy: true, details: {} })) }, /already registered/)

  const other = await build(t)
  other.app.webhooks.stats = async () => { throw new Error('outbox unreadable') }
  h = await health(other)
  assert.equal(h.status, 'degraded')
  assert.deepEqual(h.checks.webhooks, { error: 'outbox unreadable' })
})

test('the database check fails on a database that does not answer; a check that hangs times out', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-health-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const handle = await openDatabase(join(dir, 'db.sqlite'))
  const check = databaseCheck(storesOf(handle).system.ping)
  assert.equal((await check()).healthy, true)
  await handle.close()
  const failed = await check()
  assert.equal(failed.healthy, false)
  assert.equal(failed.details.ok, false)
  assert.equal(typeof failed.details.error, 'string')

  const registry = createHealth()
  registry.register('database', check)
  registry.register('stuck', async () => await new Promise(() => {}))
  const started = Date.now()
  const report = await registry.run()
  assert.ok(Date.now() - started < CHECK_TIMEOUT_MS + 1000)
  assert.equal(report.healthy, false)
  assert.deepEqual(report.checks.stuck, { error: `timed out after ${CHECK_TIMEOUT_MS} ms` })
  assert.equal(report.checks.database.ok, false)
})

test('the OpenAPI document shows the health values and checks', async (t) => {
  const { app } = await build(t)
  const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
  const text = JSON.stringify(doc.paths['/api/health'].get.responses['200'])
  for (const word of ['"healthy"', '"degraded"', 'database', 'latencyMs', 'sessions', 'loggedOut', 'disconnectedTooLong', 'webhooks', 'pending', 'failing', 'HEALTH_DISCONNECTED_MS']) {
    assert.ok(text.includes(word), `${word} in the health response schema`)
  }
})

test('every request runs every check: a change shows in the next answer', async (t) => {
  const app = await build(t)
  let runs = 0
  app.app.health.register('counted', async () => { runs++; return { healthy: true, details: {} } })
  await health(app)
  await health(app)
  assert.equal(runs, 2)
})
