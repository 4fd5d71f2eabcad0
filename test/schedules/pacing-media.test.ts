import assert from 'node:assert/strict'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { BACKOFF_BASE_MS, createPacing } from '../../plugins/pacing/index.js'
import { build } from '../helper.js'
import { harness } from '../statuses/harness.js'
import { insertSession } from '../support/sessions.js'
import { dbOf } from '../support/db.js'

// Pacing's back-off after the platform refused a post (429 / 463), and media a schedule names kept through
// the uploads cleanup until the schedule goes. (The platform's rejections reach the service as
// `status-error` events; through Baileys and the emulator: test/statuses/e2e.test.ts, error 479.)

test('a 429 or 463 from the platform backs the session off exponentially; other errors do not; a post after it starts again', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  let clock = 1_000_000_000_000
  const pacing = createPacing({ stores: h.app.stores, config: { pacing: { maxStatusesPerDay: 0, maxRecipientsPerDay: 0 } }, platform: h.platform as unknown as FastifyInstance['platform'], events: h.app.domainEvents, log: h.app.log, now: () => clock })
  pacing.start()
  t.after(() => { pacing.stop() })
  assert.deepEqual(await pacing.check('s1', 1), { ok: true })
  h.platform.emit('status-error', { sessionId: 's1', messageId: 'M1', error: '479' })
  assert.deepEqual(await pacing.check('s1', 1), { ok: true }, '479 is no push-back')
  h.platform.emit('status-error', { sessionId: 's1', messageId: 'M2', error: '463' })
  const first = await pacing.check('s1', 1)
  assert.equal(first.ok, false)
  assert.equal(!first.ok && first.retryAfterMs, BACKOFF_BASE_MS)
  await assert.rejects(pacing.admit('s1', 1), (err: Error & { statusCode?: number, headers?: Record<string, string> }) =>
    err.statusCode === 429 && err.headers?.['retry-after'] === String(BACKOFF_BASE_MS / 1000) && /backing off/.test(err.message))
  // domain events reach their listeners after their commit to the event log: a listener added after the
  // pacing's runs after it, so its promise says the pacing has seen the event
  const seen = (event: 'statuses-updated' | 'status-sent'): Promise<void> => new Promise((resolve) => { h.app.domainEvents.on(event, () => { resolve() }) })
  // a send that stopped with the platform's 429 doubles it
  const failedSeen = seen('statuses-updated')
  h.app.domainEvents.emit('statuses-updated', { sessionId: 's1', statusId: '9', action: 'send-failed', message: 'Status 9 was not sent: rate-overlimit 429' })
  await failedSeen
  const second = await pacing.check('s1', 1)
  assert.equal(!second.ok && second.retryAfterMs, 2 * BACKOFF_BASE_MS)
  assert.deepEqual(await pacing.check('s2', 1), { ok: true }, 'other sessions are not held')
  clock += 2 * BACKOFF_BASE_MS
  assert.deepEqual(await pacing.check('s1', 1), { ok: true }, 'over once it ran out')
  const sentSeen = seen('status-sent')
  h.app.domainEvents.emit('status-sent', { sessionId: 's1', statusId: '10', id: '10', type: 'text', content: 'x', caption: '', timestamp: new Date(clock).toISOString(), platformMessageId: 'M3', contactCount: 1 })
  await sentSeen
  h.platform.emit('status-error', { sessionId: 's1', messageId: 'M4', error: '463' })
  const again = await pacing.check('s1', 1)
  assert.equal(!again.ok && again.retryAfterMs, BACKOFF_BASE_MS, 'a post in between started the sequence again')
})

test('an upload a schedule names survives the uploads cleanup until the schedule is deleted', async (t) => {
  const { app, api, config } = await build(t, { STATUS_TTL_HOURS: '0.001' })
  await insertSession(app, 'm1')
  const old = Date.now() - 86_400_000
  const filename = `${old}-00000000abcd-photo.jpg`
  writeFileSync(join(config.uploadDir, filename), 'x')
  await dbOf(app).db.insertInto('uploads').values({ filename, kind: 'image', mime_type: 'image/jpeg', size: 1, created_at: old }).execute()
  const res = await api({ method: 'POST', url: '/api/sessions/m1/scheduled-statuses', payload: { status: { type: 'image', content: filename }, at: new Date(Date.now() + 3_600_000).toISOString() } })
  assert.equal(res.statusCode, 200, res.body)
  const id = res.json<{ data: { id: string } }>().data.id
  await app.statuses.cleanup()
  assert.ok(existsSync(join(config.uploadDir, filename)), 'kept while the schedule names it')
  const deleted = await api({ method: 'DELETE', url: `/api/sessions/m1/scheduled-statuses/${id}` })
  assert.equal(deleted.statusCode, 200, deleted.body)
  assert.equal(existsSync(join(config.uploadDir, filename)), false, 'released with the schedule')
})
