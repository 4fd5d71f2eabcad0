import assert from 'node:assert/strict'
import { test } from 'node:test'
import { waitFor } from '../helper.js'
import { startStack, type Stack } from '../stack.js'

// Scheduled statuses through the HTTP API, real Baileys and the emulator (issue 24): a one-off fires once,
// a repeating one fires three times (the test-only seconds unit), each run recorded with its status.

const OWN = '4915200000001'
const A = '4915200000011'
const B = '4915200000012'
const SID = 'sched'

interface Run { at: string, firedAt: string | null, statusId: string | null, state: string, late: boolean, error: string | null }
interface Schedule { id: string, state: string, nextRunAt: string | null, runCount: number, runs: Run[] }

async function create (s: Stack, body: Record<string, unknown>): Promise<string> {
  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/scheduled-statuses`, payload: body })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: { id: string } }>().data.id
}

async function get (s: Stack, id: string): Promise<Schedule> {
  const res = await s.api({ method: 'GET', url: `/api/sessions/${SID}/scheduled-statuses/${id}` })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: Schedule }>().data
}

const inMs = (ms: number): string => new Date(Date.now() + ms).toISOString()

test('scheduled statuses through real Baileys and the emulator', { timeout: 120_000 }, async (t) => {
  const s = await startStack(t, { SCHEDULE_ALLOW_SECONDS: 'true', RATE_LIMIT_MAX: '1000000' })
  await s.link(SID, OWN)
  s.emu.addContact({ number: A })
  s.emu.addContact({ number: B })

  await t.test('a status due in 2 s fires once; its run names the status, which reached the emulator', async () => {
    const text = `scheduled once ${Date.now()}`
    const id = await create(s, { status: { type: 'text', content: text, targetNumbers: `${A},${B}` }, at: inMs(2000) })
    const fired = await s.events.next('scheduled-status-fired', (p) => p.scheduleId === id, 20_000)
    assert.equal(fired.sessionId, SID)
    assert.equal(fired.late, false)
    const record = await s.emu.waitForStatus((r) => r.text === text && r.decrypted, 15_000)
    const schedule = await waitFor(async () => { const g = await get(s, id); return g.runs[0]?.state === 'fired' ? g : null }, 10_000, 'the run recorded')
    assert.equal(schedule.state, 'done')
    assert.equal(schedule.nextRunAt, null)
    assert.equal(schedule.runs.length, 1)
    assert.equal(schedule.runs[0].statusId, fired.statusId)
    assert.ok(schedule.runs[0].firedAt !== null && Date.parse(schedule.runs[0].firedAt) >= Date.parse(schedule.runs[0].at))
    const sent = await s.api({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })
    const listed = sent.json<{ data: Array<{ id: string, platformMessageId: string, content: string }> }>().data.filter((x) => x.content === text)
    assert.equal(listed.length, 1, 'posted exactly once')
    assert.equal(listed[0].id, fired.statusId)
    assert.equal(listed[0].platformMessageId, record.id)
    // nothing more comes: still one run and one status a few polls later
    await new Promise((resolve) => setTimeout(resolve, 2500))
    assert.equal((await get(s, id)).runs.length, 1)
    assert.equal(s.events.all('scheduled-status-fired').filter((p) => p.scheduleId === id).length, 1)
  })

  await t.test('a repeating schedule (every 2 s, count 3) fires three times, then is done', async () => {
    const text = `scheduled repeat ${Date.now()}`
    const id = await create(s, { status: { type: 'text', content: text, targetNumbers: A }, at: inMs(1500), repeat: { every: 2, unit: 'seconds', count: 3 } })
    const schedule = await waitFor(async () => { const g = await get(s, id); return g.state === 'done' && g.runs.every((r) => r.state === 'fired') ? g : null }, 40_000, 'three runs')
    assert.equal(schedule.runs.length, 3)
    assert.equal(schedule.runCount, 3)
    const dues = schedule.runs.map((r) => Date.parse(r.at))
    assert.deepEqual(dues.slice(1).map((d, i) => d - dues[i]), [2000, 2000], 'runs are due two seconds apart')
    assert.equal(new Set(schedule.runs.map((r) => r.statusId)).size, 3)
    // each run answers once its status is recorded: the last one reaches the emulator a moment later
    await waitFor(() => s.emu.statuses().filter((r) => r.text === text && r.decrypted).length === 3, 15_000, 'three statuses in the emulator')
    await new Promise((resolve) => setTimeout(resolve, 2500))
    assert.equal(s.emu.statuses().filter((r) => r.text === text).length, 3, 'no fourth run')
  })

  await t.test('pause stops runs; resume goes on; delete removes the schedule', async () => {
    const id = await create(s, { status: { type: 'text', content: 'paused one' }, at: inMs(60_000), repeat: { every: 1, unit: 'hours' } })
    const paused = await s.api({ method: 'POST', url: `/api/sessions/${SID}/scheduled-statuses/${id}/pause` })
    assert.equal(paused.json<{ data: Schedule }>().data.state, 'paused')
    const resumed = await s.api({ method: 'POST', url: `/api/sessions/${SID}/scheduled-statuses/${id}/resume` })
    assert.equal(resumed.json<{ data: Schedule }>().data.state, 'active')
    const changed = await s.api({ method: 'PATCH', url: `/api/sessions/${SID}/scheduled-statuses/${id}`, payload: { repeat: null } })
    assert.equal(changed.statusCode, 200, changed.body)
    assert.equal(changed.json<{ data: { repeat: unknown } }>().data.repeat, null)
    const listed = await s.api({ method: 'GET', url: `/api/sessions/${SID}/scheduled-statuses` })
    assert.ok(listed.json<{ data: Schedule[] }>().data.some((x) => x.id === id))
    const deleted = await s.api({ method: 'DELETE', url: `/api/sessions/${SID}/scheduled-statuses/${id}` })
    assert.equal(deleted.statusCode, 200, deleted.body)
    const gone = await s.api({ method: 'GET', url: `/api/sessions/${SID}/scheduled-statuses/${id}` })
    assert.equal(gone.statusCode, 404)
    assert.equal(gone.json<{ error: string }>().error, 'Schedule not found')
  })
})
