import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runAfter, runAtOrAfter, type RepeatRule } from '../../src/schedules/recurrence.js'
import { build } from '../helper.js'
import { insertSession } from '../support/sessions.js'

// Scheduled statuses: what the API refuses (400 naming the field) and when repeating runs fall.

const SID = 'valid'
const future = (ms = 3_600_000): string => new Date(Date.now() + ms).toISOString()

test('a bad schedule answers 400 naming the field', async (t) => {
  const { app, api } = await build(t)
  await insertSession(app, SID)
  const status = { type: 'text', content: 'hi' }
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['no at', { status }, /body\.at is required/],
    ['status without content', { status: { type: 'text' }, at: future() }, /^body\.status\.content is required$/],
    ['not a time', { status, at: 'tomorrow' }, /body\.at/],
    ['no zone', { status, at: '2030-01-01T09:00:00' }, /body\.at/],
    ['in the past', { status, at: '2020-01-01T09:00:00Z' }, /body\.at is in the past/],
    ['bad status', { status: { type: 'gif', content: 'x' }, at: future() }, /body\.status\.type/],
    ['bad number', { status: { ...status, targetNumbers: '12' }, at: future() }, /^body\.status\.targetNumbers has 1 invalid entry \(each must be 10 to 15 digits[^)]*\): body\.status\.targetNumbers\[0\] "12"$/],
    ['unknown upload', { status: { type: 'image', content: 'nope.jpg' }, at: future() }, /body\.status\.content: uploaded file not found/],
    ['every 0', { status, at: future(), repeat: { every: 0, unit: 'days' } }, /body\.repeat\.every/],
    ['bad unit', { status, at: future(), repeat: { every: 1, unit: 'fortnights' } }, /body\.repeat\.unit/],
    ['seconds off', { status, at: future(), repeat: { every: 1, unit: 'seconds' } }, /SCHEDULE_ALLOW_SECONDS/],
    ['timeOfDay with hours', { status, at: future(), repeat: { every: 4, unit: 'hours', timeOfDay: '09:00' } }, /body\.repeat\.timeOfDay/],
    ['bad timeOfDay', { status, at: future(), repeat: { every: 1, unit: 'days', timeOfDay: '25:00' } }, /body\.repeat\.timeOfDay/],
    ['bad weekday', { status, at: future(), repeat: { every: 1, unit: 'weeks', weekdays: ['monday'] } }, /body\.repeat\.weekdays/],
    ['bad zone', { status, at: future(), repeat: { every: 1, unit: 'days', timeZone: 'Mars/Olympus' } }, /body\.repeat\.timeZone/],
    ['until before at', { status, at: future(), repeat: { every: 1, unit: 'days', until: future(60_000) } }, /body\.repeat\.until must not be before body\.at/],
    ['unknown field', { status, at: future(), when: 'now' }, /body\.when is not an allowed field/]
  ]
  for (const [what, payload, error] of cases) {
    const res = await api({ method: 'POST', url: `/api/sessions/${SID}/scheduled-statuses`, payload })
    assert.equal(res.statusCode, 400, `${what}: ${res.body}`)
    const body = res.json<{ success: boolean, error: string }>()
    assert.equal(body.success, false)
    assert.match(body.error, error, what)
  }
  const unknown = await api({ method: 'POST', url: '/api/sessions/nobody/scheduled-statuses', payload: { status, at: future() } })
  assert.equal(unknown.statusCode, 404)
  const ok = await api({ method: 'POST', url: `/api/sessions/${SID}/scheduled-statuses`, payload: { status, at: future(), repeat: { every: 1, unit: 'days', timeOfDay: '09:00', timeZone: 'Europe/Berlin' } } })
  assert.equal(ok.statusCode, 200, ok.body)
  const id = ok.json<{ data: { id: string } }>().data.id
  const patched = await api({ method: 'PATCH', url: `/api/sessions/${SID}/scheduled-statuses/${id}`, payload: { at: '2020-01-01T00:00:00Z' } })
  assert.equal(patched.statusCode, 400)
  const empty = await api({ method: 'PATCH', url: `/api/sessions/${SID}/scheduled-statuses/${id}`, payload: {} })
  assert.equal(empty.statusCode, 400)
})

const rule = (r: Partial<RepeatRule> & Pick<RepeatRule, 'every' | 'unit'>): RepeatRule => ({ offsetMinutes: 0, ...r })
const at = (iso: string): number => Date.parse(iso)
const isoOf = (ms: number | null): string | null => ms === null ? null : new Date(ms).toISOString()

test('repeat rules: steps, wall-clock days across a DST change, weekdays, weeks, until', () => {
  const first = at('2026-03-27T09:00:00+01:00')
  // every 4 hours from the first run
  assert.equal(isoOf(runAfter(first, rule({ every: 4, unit: 'hours' }), first)), '2026-03-27T12:00:00.000Z')
  // every day at 09:00 Berlin: 08:00Z before the change to summer time (29 March), 07:00Z after
  const berlin = rule({ every: 1, unit: 'days', timeZone: 'Europe/Berlin' })
  const days: Array<string | null> = []
  for (let t: number | null = first, i = 0; t !== null && i < 4; i++) { days.push(isoOf(t)); t = runAfter(first, berlin, t) }
  assert.deepEqual(days, ['2026-03-27T08:00:00.000Z', '2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z'])
  // weekdays only, at 18:30 in the offset `at` was written with (+01:00)
  const workdays = rule({ every: 1, unit: 'days', weekdays: ['mon', 'tue', 'wed', 'thu', 'fri'], timeOfDay: '18:30', offsetMinutes: 60 })
  assert.equal(isoOf(runAtOrAfter(first, workdays, first)), '2026-03-27T17:30:00.000Z') // Friday
  assert.equal(isoOf(runAfter(first, workdays, at('2026-03-27T17:30:00Z'))), '2026-03-30T17:30:00.000Z') // Monday: a fixed offset has no summer time
  // every 2 weeks on Tuesday and Thursday
  const fortnight = rule({ every: 2, unit: 'weeks', weekdays: ['tue', 'thu'] })
  const mon = at('2026-03-02T10:00:00Z')
  const runs: Array<string | null> = []
  for (let t: number | null = runAtOrAfter(mon, fortnight, mon), i = 0; t !== null && i < 4; i++) { runs.push(isoOf(t)); t = runAfter(mon, fortnight, t) }
  assert.deepEqual(runs, ['2026-03-03T10:00:00.000Z', '2026-03-05T10:00:00.000Z', '2026-03-17T10:00:00.000Z', '2026-03-19T10:00:00.000Z'])
  // until ends it; a one-off has no run after its own
  assert.equal(runAfter(first, rule({ every: 1, unit: 'days', until: first + 3_600_000 }), first), null)
  assert.equal(runAfter(first, null, first), null)
  assert.equal(runAtOrAfter(first, null, first), first)
})
