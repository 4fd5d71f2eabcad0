import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { createScheduler } from '../../plugins/schedules/scheduler.js'
import type { ResolvedRecipients } from '../../plugins/send-status/recipients.js'
import { harness } from '../statuses/harness.js'
import { dbOf } from '../support/db.js'

// A scheduled run with pacing resolves its recipients once: pacing's look-ahead counts them and the send
// takes the same resolution (it used to resolve the audience again in the send).

test('a paced scheduled run resolves its recipients once and sends to what pacing counted', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  const dueAt = Date.now() - 1000
  await h.app.stores.schedules.insert({
    id: 'sch_once', sessionId: 's1', body: JSON.stringify({ type: 'text', content: 'scheduled', targetNumbers: '15551230001,15551230002' }),
    mediaFile: null, firstAt: dueAt, repeat: null, state: 'active', nextRunAt: dueAt, deferredUntil: null, createdAt: dueAt, updatedAt: dueAt
  })
  const resolvedAt: ResolvedRecipients[] = []
  const handed: Array<ResolvedRecipients | undefined> = []
  const counted: number[] = []
  const scheduler = createScheduler({
    schedules: h.app.stores.schedules,
    config: h.app.config,
    platform: h.platform as unknown as FastifyInstance['platform'],
    statuses: {
      recipientsOf: async (sessionId, body) => { const r = await h.app.statuses.recipientsOf(sessionId, body); resolvedAt.push(r); return r },
      submit: async (sessionId, body, resolved) => { handed.push(resolved); return await h.app.statuses.submit(sessionId, body, resolved) }
    },
    pacing: { check: async (_sessionId, recipients) => { counted.push(recipients); return { ok: true } } },
    events: h.app.domainEvents,
    log: h.app.log
  })
  await scheduler.tick()
  assert.equal(resolvedAt.length, 1, 'resolved once')
  assert.deepEqual(resolvedAt[0].recipients, ['15551230001', '15551230002'])
  assert.deepEqual(counted, [2], 'pacing counted the resolved recipients')
  assert.equal(handed.length, 1)
  assert.equal(handed[0], resolvedAt[0], 'the send took the resolution pacing counted')
  const run = await dbOf(h.app).db.selectFrom('schedule_runs').select(['state', 'error']).executeTakeFirstOrThrow()
  assert.equal(run.state, 'fired', run.error ?? '')
})
