import assert from 'node:assert/strict'
import { test } from 'node:test'
import { serviceApi } from '../support/clients.js'
import { sleep } from '../support/wait.js'
import { killableService } from './killable.js'

// Scheduled runs across a SIGKILL (issue 24): the service as a real process, killed before two runs are
// due and started again later. The run that is less than SCHEDULE_GRACE_MS late fires once, flagged late;
// the one further back is recorded missed and never posted.

const OWN = '15557700001'
const A = '15557700011'
const SID = 'cron'
// the run due at 16 s is 8.5 s late at the restart (more than LATE_MS, 5 s) and leaves 11.5 s for the start and
// the reconnect before the grace; the one due at 3 s is 21.5 s late, past the grace before the process is up
const GRACE_MS = 20_000

interface Schedule { state: string, runs: Array<{ state: string, late: boolean, statusId: string | null, error: string | null }> }

test('a run due while the service was killed fires once, late, inside the grace; one outside it is missed', { timeout: 170_000 }, async (t) => {
  const k = await killableService(t, { tempPrefix: 'st-sched-kill-', sessionId: SID, number: OWN, env: { SCHEDULE_GRACE_MS: String(GRACE_MS) } })
  const { emu, start } = k
  emu.addContact({ number: A })
  const t0 = Date.now()
  const schedule = async (text: string, dueMs: number): Promise<string> =>
    (await k.api.post<{ id: string }>(`/sessions/${SID}/scheduled-statuses`, { status: { type: 'text', content: text, targetNumbers: A }, at: new Date(t0 + dueMs).toISOString() })).id
  const old = await schedule('missed while down', 3000)
  const recent = await schedule('late after restart', 16_000)

  k.svc.child.kill('SIGKILL')
  await k.svc.exited
  // down until the first run is more than the grace late, the second one less
  await sleep(Math.max(0, t0 + 24_500 - Date.now()))
  const svc = await start()
  const api = serviceApi(svc.base)
  const get = async (id: string): Promise<Schedule> => await api.get<Schedule>(`/sessions/${SID}/scheduled-statuses/${id}`)

  const deadline = Date.now() + 60_000
  let fired: Schedule
  for (;;) {
    fired = await get(recent)
    if (fired.runs[0]?.state === 'fired') break
    assert.ok(Date.now() < deadline, `the late run never fired: ${JSON.stringify(fired)}`)
    await sleep(250)
  }
  assert.equal(fired.runs.length, 1)
  assert.equal(fired.runs[0].late, true)
  assert.equal(fired.state, 'done')
  const status = await emu.waitForStatus((s) => s.text === 'late after restart' && s.decrypted, 20_000)
  assert.ok(status.recipients.some((r) => r.startsWith(A)), 'posted to its recipient')

  const missed = await get(old)
  assert.equal(missed.runs.length, 1)
  assert.equal(missed.runs[0].state, 'missed')
  assert.equal(missed.runs[0].statusId, null)
  assert.match(missed.runs[0].error ?? '', /SCHEDULE_GRACE_MS/)
  // a few polls later: still one post of each
  await sleep(3000)
  assert.equal(emu.statuses().filter((s) => s.text === 'late after restart').length, 1)
  assert.equal(emu.statuses().filter((s) => s.text === 'missed while down').length, 0)
  assert.equal((await get(recent)).runs.length, 1)
})
