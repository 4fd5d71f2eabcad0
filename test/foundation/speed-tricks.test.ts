import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { mock, test, type TestContext } from 'node:test'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { afterReceiptTurn } from '../../src/platform/burst-gc.js'
import { deferredCompiles } from '../../plugins/core/validation.js'
import { SPEED_TRICK_NAMES, SPEED_TRICKS } from '../../src/speed-tricks.js'
import { sqliteOf, testConfig, TEST_API_KEY, waitFor } from '../helper.js'
import { dbOf } from '../support/db.js'
import { insertSession } from '../support/sessions.js'

// docs/architecture.md, habit 9: every speed trick has an off switch (SPEED_TRICKS_OFF) that takes its plain path.
// Here: the setting is parsed and refused as documented, and each switch really takes the plain path.
// test/foundation/speed-tricks-off.test.ts runs the tests of these behaviours again with every trick off.

const load = (value: string) => loadConfig({ API_KEY: TEST_API_KEY, DATA_DIR: '/nonexistent-dir-st', SPEED_TRICKS_OFF: value }, { envFile: false })

test('SPEED_TRICKS_OFF: unset turns nothing off, `all` every trick, a list those named; an unknown name is a start-up error naming the setting', () => {
  assert.deepEqual([...loadConfig({ API_KEY: TEST_API_KEY, DATA_DIR: '/nonexistent-dir-st' }, { envFile: false }).speedTricksOff], [])
  assert.deepEqual([...load('all').speedTricksOff].sort(), [...SPEED_TRICK_NAMES].sort())
  assert.deepEqual([...load(' burst-gc , deferred-compiles ').speedTricksOff].sort(), ['burst-gc', 'deferred-compiles'])
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

test('deferred-compiles off: a schema that does not compile fails ready(); on: the start goes on', async (t) => {
  const broken = (app: FastifyInstance): void => {
    app.get('/broken', { config: { public: true }, schema: { response: { 200: Type.Object({ a: Type.Unsafe({ $ref: 'no-such-schema#' }) }) } } }, async () => ({ a: 1 }))
  }
  await assert.rejects(appWith(t, 'deferred-compiles', broken), /serialization schema for GET: \/broken/)
  await appWith(t, '', broken)
})

test('deferred-compiles: warm compiles what no request needed, one per turn of the event loop (a request waits behind one compile at most)', async () => {
  const compiles = deferredCompiles()
  let turn = 0
  const turns: number[] = []
  const errors: unknown[] = []
  const fns = [1, 2, 3].map((n) => compiles.lazy(() => { turns.push(turn); if (n === 2) throw new Error('no'); return () => n }))
  // used already: compiled now, not again by warm
  assert.equal(fns[2](null), 3)
  assert.deepEqual(turns, [0])
  // a turn of the event loop counted by a setImmediate that schedules itself (once per check phase), and the
  // compiles awaited by count, not for a fixed time (a loaded machine may take longer than any fixed wait)
  let ticking = true
  const tick = (): void => { turn++; if (ticking) setImmediate(tick) }
  setImmediate(tick)
  compiles.warm((err) => { errors.push(err) })
  await waitFor(() => turns.length >= 3, 10_000, 'three compiles')
  ticking = false
  assert.equal(turns.length, 3)
  assert.notEqual(turns[1], turns[2], `compiles in turns ${turns.join(', ')}`)
  assert.equal(errors.length, 1)
  assert.equal(fns[0](null), 1)
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

test('kept-statements off: every Kysely query, the sent-statuses list and the sessions list prepared on each run; on: once', async (t) => {
  const prepares = async (off: string): Promise<string[]> => {
    const app = await appWith(t, off)
    await insertSession(app, 's')
    const sqlite = sqliteOf(dbOf(app))
    const texts: string[] = []
    const prepare = sqlite.prepare.bind(sqlite)
    sqlite.prepare = ((text: string) => { texts.push(text); return prepare(text) }) as typeof sqlite.prepare
    for (let i = 0; i < 3; i++) {
      assert.equal(await app.stores.statuses.find('s', 1), undefined)
      assert.deepEqual(await app.stores.statuses.listSent('s', 0), [])
      assert.deepEqual((await app.stores.sessions.list()).map((r) => r.id), ['s'])
    }
    return texts
  }
  const on = await prepares('')
  assert.equal(on.length, 3, on.join('\n'))
  assert.equal(new Set(on).size, 3)
  const off = await prepares('kept-statements')
  assert.equal(off.length, 9, off.join('\n'))
  assert.equal(new Set(off).size, 3)
})

test('pieced-json off: a long sent-statuses list goes to onSend as one string; on: as a Buffer written piece by piece, the same text', async (t) => {
  const answer = async (off: string): Promise<{ kind: string, body: string }> => {
    let kind = ''
    const app = await appWith(t, off, (a) => {
      a.addHook('onSend', async (req, _reply, payload) => {
        if (req.url.endsWith('/sent-statuses')) kind = typeof payload === 'string' ? 'string' : Buffer.isBuffer(payload) ? 'buffer' : typeof payload
        return payload
      })
    })
    await insertSession(app, 's')
    const now = Date.now()
    await dbOf(app).db.insertInto('statuses').values(Array.from({ length: 200 }, (_, i) => ({
      session_id: 's', type: 'text' as const, content: `status ${i} ${'x'.repeat(200)}`, caption: '', message_id: `M${i}`, state: 'sent' as const,
      created_at: now - i * 1000, contact_count: 1, target_numbers: '15551110000', media_file: null, background_color: null, font: null, error: null
    }))).execute()
    const res = await app.inject({ method: 'GET', url: '/api/sessions/s/sent-statuses', headers: { 'x-api-key': TEST_API_KEY } })
    assert.equal(res.statusCode, 200)
    return { kind, body: res.body }
  }
  const off = await answer('pieced-json')
  const on = await answer('')
  assert.equal(off.kind, 'string')
  assert.equal(on.kind, 'buffer')
  assert.equal(on.body.replace(/"timestamp":"[^"]+"/g, ''), off.body.replace(/"timestamp":"[^"]+"/g, ''))
})
