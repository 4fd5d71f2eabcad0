import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { mock, test, type TestContext } from 'node:test'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { afterReceiptTurn } from '../../src/platform/burst-gc.js'
import { SPEED_TRICK_NAMES, SPEED_TRICKS } from '../../src/speed-tricks.js'
import { build, testConfig, TEST_API_KEY } from '../helper.js'
import { insertSession } from '../support/sessions.js'

// STYLE.md habit 9: every speed trick has an off switch (SPEED_TRICKS_OFF) that takes its plain path.
// Here: the setting is parsed and refused as documented, and each switch really takes the plain path.
// test/foundation/speed-tricks-off.test.ts runs the tests of these behaviours again with every trick off.

const load = (value: string) => loadConfig({ API_KEY: TEST_API_KEY, DATA_DIR: '/nonexistent-dir-st', SPEED_TRICKS_OFF: value }, { envFile: false })

test('SPEED_TRICKS_OFF: unset turns nothing off, `all` every trick, a list those named; an unknown name is a start-up error naming the setting', () => {
  assert.deepEqual([...loadConfig({ API_KEY: TEST_API_KEY, DATA_DIR: '/nonexistent-dir-st' }, { envFile: false }).speedTricksOff], [])
  assert.deepEqual([...load('all').speedTricksOff].sort(), [...SPEED_TRICK_NAMES].sort())
  assert.deepEqual([...load(' burst-gc , health-snapshot ').speedTricksOff].sort(), ['burst-gc', 'health-snapshot'])
  for (const bad of ['health', 'burst-gc,nope', 'toString', 'ALL']) {
    assert.throws(() => load(bad), (err: Error) => err instanceof ConfigError && /^Invalid setting SPEED_TRICKS_OFF: no speed trick is named/.test(err.message) && err.message.includes('burst-gc'), bad)
  }
})

test('every speed trick is in the docs, and the measurements it names are in bench/NOTES.md', () => {
  const notes = readFileSync('bench/NOTES.md', 'utf8')
  const docs = readFileSync('docs/benchmarks.md', 'utf8')
  for (const [name, info] of Object.entries(SPEED_TRICKS)) {
    assert.ok(info.why.length > 0 && info.off.length > 0, name)
    assert.ok(docs.includes(`| \`${name}\` |`), `${name} in docs/benchmarks.md's table`)
    const titles = [...info.measured.matchAll(/"([^"]+)"/g)].map((m) => m[1])
    assert.ok(titles.length > 0, `${name} names its measurement`)
    for (const title of titles) assert.ok(notes.includes(`**${title}`), `${name}: "${title}" in bench/NOTES.md`)
  }
})

/** An app built with `off`, with `hook` added before it is ready (a hook cannot be added once it is). */
async function appWith (t: TestContext, off: string, hook?: (app: FastifyInstance) => void): Promise<FastifyInstance> {
  const { config, dir } = testConfig(off === '' ? {} : { SPEED_TRICKS_OFF: off })
  const app = await buildApp(config)
  t.after(async () => { await app.close(); rmSync(dir, { recursive: true, force: true }) })
  hook?.(app)
  await app.ready()
  return app
}

const get = async (app: FastifyInstance, url: string) => await app.inject({ method: 'GET', url, headers: { 'x-api-key': TEST_API_KEY } })

test('health-snapshot off: every request runs every check (no change stamp); on: one run serves both', async (t) => {
  for (const [off, runs] of [['health-snapshot', 2], ['', 1]] as const) {
    const { app } = await build(t, off === '' ? {} : { SPEED_TRICKS_OFF: off })
    let calls = 0
    app.health.register('counted', () => { calls++; return { healthy: true, details: {} } })
    if (off === '') assert.doesNotThrow(() => app.health.stamp())
    else assert.throws(() => app.health.stamp(), /no change stamp/)
    // with the snapshot on, two requests within its 100 ms share one run; a slower machine may run twice
    assert.equal((await get(app, '/api/health')).statusCode, 200)
    assert.equal((await get(app, '/api/health')).statusCode, 200)
    if (off === '') assert.ok(calls >= runs)
    else assert.equal(calls, runs)
  }
})

test('health-template and sent-statuses-bytes off: the route answers an object its serializer writes; on: text it kept', async (t) => {
  for (const off of ['health-template,sent-statuses-bytes', '']) {
    const objects = new Map<string, number>()
    const app = await appWith(t, off, (a) => {
      a.addHook('preSerialization', async (req, _reply, payload) => {
        const path = req.url.split('/').pop() ?? ''
        objects.set(path, (objects.get(path) ?? 0) + 1)
        return payload
      })
    })
    await insertSession(app, 's')
    let lists = 0
    const list = app.statuses.list
    app.statuses.list = async (...args) => { lists++; return await list(...args) }
    for (let i = 0; i < 2; i++) {
      const health = await get(app, '/api/health')
      assert.equal(health.json<{ data: { status: string } }>().data.status, 'healthy')
      assert.deepEqual((await get(app, '/api/sessions/s/sent-statuses')).json(), { success: true, data: [] })
    }
    const n = off === '' ? 0 : 2
    assert.deepEqual([objects.get('health') ?? 0, objects.get('sent-statuses') ?? 0], [n, n], off)
    assert.equal(lists, off === '' ? 1 : 2, 'the list is queried per request only with its trick off')
  }
})

test('admin-key-compare off: the admin key is hashed and compared by timingSafeEqual; on: not', async (t) => {
  const compare = mock.method(crypto, 'timingSafeEqual')
  syncBuiltinESMExports()
  t.after(() => { compare.mock.restore(); syncBuiltinESMExports() })
  for (const [off, used] of [['admin-key-compare', true], ['', false]] as const) {
    const { app } = await build(t, off === '' ? {} : { SPEED_TRICKS_OFF: off })
    compare.mock.resetCalls()
    assert.equal((await get(app, '/api/stats')).statusCode, 200)
    const wrong = await app.inject({ method: 'GET', url: '/api/stats', headers: { 'x-api-key': `${TEST_API_KEY}x` } })
    assert.equal(wrong.statusCode, 401)
    assert.equal(compare.mock.callCount() > 0, used, off)
  }
})

test('deferred-compiles off: a schema that does not compile fails ready(); on: the start goes on', async (t) => {
  const broken = (app: FastifyInstance): void => {
    app.get('/broken', { schema: { response: { 200: Type.Object({ a: Type.Unsafe({ $ref: 'no-such-schema#' }) }) } } }, async () => ({ a: 1 }))
  }
  await assert.rejects(appWith(t, 'deferred-compiles', broken), /serialization schema for GET: \/broken/)
  await appWith(t, '', broken)
})

test('burst-gc off: no collection is scheduled after a burst; on: one', (t) => {
  const timers = mock.method(globalThis, 'setTimeout')
  t.after(() => { timers.mock.restore() })
  afterReceiptTurn(5000, null)
  assert.equal(timers.mock.callCount(), 0)
  afterReceiptTurn(5000, 60_000)
  assert.equal(timers.mock.callCount(), 1)
  // the same burst with the trick off afterwards: nothing new, and the one scheduled above stays unref'd
  afterReceiptTurn(5000, null)
  assert.equal(timers.mock.callCount(), 1)
})
