import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { createScheduler } from '../../plugins/schedules/scheduler.js'
import { harness, type Harness } from '../statuses/harness.js'
import { dialectEnv, dialectTest } from '../support/db-matrix.js'
import { logged, refuse } from '../support/event-refusal.js'
import { dbOf } from '../support/db.js'

// scheduled-status-fired and scheduled-status-failed are written in the transaction that records the run's
// end (issue 26), on both dialects: with the event refused (a trigger on event_log) the end is not recorded
// as it was. The old code recorded the run, then wrote the event on its own: a crash between lost it.

async function setUp (h: Harness, dueAt: number) {
  await h.addSession('s1')
  await h.app.stores.schedules.insert({
    id: 'sch_test', sessionId: 's1', body: JSON.stringify({ type: 'text', content: 'scheduled', targetNumbers: '15551230001' }),
    mediaFile: null, firstAt: dueAt, repeat: null, state: 'active', nextRunAt: dueAt, deferredUntil: null, createdAt: dueAt, updatedAt: dueAt
  })
  return createScheduler({
    schedules: h.app.stores.schedules,
    config: h.app.config,
    platform: h.platform as unknown as FastifyInstance['platform'],
    statuses: h.app.statuses,
    events: h.app.domainEvents,
    log: h.app.log
  })
}

const runs = async (h: Harness) => await dbOf(h.app).db.selectFrom('schedule_runs').select(['state', 'status_id', 'error']).orderBy('id').execute()

dialectTest('a fired run is recorded with its scheduled-status-fired; refused, the run ends failed with its event instead', async (t, dialect) => {
  const h = await harness(t, await dialectEnv(dialect))
  const scheduler = await setUp(h, Date.now() - 1000)
  await refuse(dbOf(h.app), 'scheduled-status-fired', '%')
  await scheduler.tick()
  const [run] = await runs(h)
  assert.equal(run?.state, 'failed', 'not recorded fired without its event')
  assert.match(run?.error ?? '', /event log refused/)
  assert.notEqual(run?.status_id, null, 'the status it posted is named')
  assert.deepEqual(await logged(dbOf(h.app), 'scheduled-status-fired'), [])
  const failed = await logged(dbOf(h.app), 'scheduled-status-failed')
  assert.deepEqual(failed.map((e) => [e.scheduleId, e.state, e.statusId]), [['sch_test', 'failed', String(run?.status_id)]])
})

dialectTest('a missed run is recorded with its scheduled-status-failed, or not at all', async (t, dialect) => {
  const h = await harness(t, await dialectEnv(dialect))
  const dueAt = Date.now() - h.app.config.schedules.graceMs - 60_000
  const scheduler = await setUp(h, dueAt)
  await refuse(dbOf(h.app), 'scheduled-status-failed', '%"missed"%')
  await scheduler.tick()
  assert.deepEqual(await runs(h), [], 'no missed run without its event')
  const row = await dbOf(h.app).db.selectFrom('schedules').select(['next_run_at', 'run_count']).where('id', '=', 'sch_test').executeTakeFirstOrThrow()
  assert.deepEqual([Number(row.next_run_at), Number(row.run_count)], [dueAt, 0], 'the schedule did not move on')
  assert.deepEqual(await logged(dbOf(h.app), 'scheduled-status-failed'), [])
})
