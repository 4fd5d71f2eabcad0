import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../../src/config.js'
import type { Schedule as StoredSchedule, ScheduleRun as StoredRun } from '../../src/db/stores/schedules.js'
import type { AudienceStore } from '../../src/db/stores/audiences.js'
import type { ScheduleStore } from '../../src/db/stores/schedules.js'
import { BadRequest, ScheduleNotFound, SessionNotFound } from '../../src/errors.js'
import { isTimeZone, runAtOrAfter, writtenOffset, type RepeatRule } from '../../src/schedules/recurrence.js'
import type { CreateScheduleBody, RepeatBody, Schedule, ScheduleRun, UpdateScheduleBody } from '../../schemas/schedule.js'
import type { SendStatusBody } from '../../schemas/status.js'
import { parseHttpUrl, parseTargetNumbers } from '../send-status/parse.js'
import { checkAudience, checkRecipientFields } from '../audiences/resolve.js'

// Scheduled statuses: create, list, read, change, pause, resume, delete (issue 24). The runs themselves: scheduler.ts.

export interface ScheduleDeps {
  schedules: ScheduleStore
  audiences: Pick<AudienceStore, 'findInfo'>
  /** whether the session is known (404 otherwise) */
  sessionExists: (sessionId: string) => Promise<boolean>
  /** whether an upload of this name is kept */
  uploadExists: (filename: string) => Promise<boolean>
  config: Pick<Config, 'schedules'>
  /** removes an upload once no status and no schedule names it */
  releaseMedia: (filename: string | null) => Promise<boolean>
  log: FastifyBaseLogger
  now?: () => number
}

/** What the `repeat` column holds: the request's rule and the offset `at` was written with. */
interface StoredRepeat { rule: RepeatBody, offsetMinutes: number }

const iso = (ms: number): string => new Date(ms).toISOString()
const ZONED = 'an ISO 8601 time with a zone, e.g. 2026-05-01T09:00:00+02:00'

export function ruleOf (row: Pick<StoredSchedule, 'repeat'>): RepeatRule | null {
  if (row.repeat === null) return null
  const { rule, offsetMinutes } = JSON.parse(row.repeat) as StoredRepeat
  return {
    every: rule.every,
    unit: rule.unit as RepeatRule['unit'],
    ...(rule.until !== undefined ? { until: Date.parse(rule.until) } : {}),
    ...(rule.count !== undefined ? { count: rule.count } : {}),
    ...(rule.timeOfDay !== undefined ? { timeOfDay: rule.timeOfDay } : {}),
    ...(rule.weekdays !== undefined ? { weekdays: rule.weekdays as RepeatRule['weekdays'] } : {}),
    ...(rule.timeZone !== undefined ? { timeZone: rule.timeZone } : {}),
    offsetMinutes
  }
}

export function bodyOf (row: Pick<StoredSchedule, 'body'>): SendStatusBody {
  return JSON.parse(row.body) as SendStatusBody
}

export function toRun (r: StoredRun): ScheduleRun {
  return {
    at: iso(r.at),
    firedAt: r.firedAt === null ? null : iso(r.firedAt),
    statusId: r.statusId === null ? null : String(r.statusId),
    state: r.state,
    late: r.late,
    error: r.error
  }
}

export function createScheduleService (deps: ScheduleDeps) {
  const { config } = deps
  const store = deps.schedules
  const now = deps.now ?? Date.now

  async function requireSession (sessionId: string): Promise<void> {
    if (!await deps.sessionExists(sessionId)) throw new SessionNotFound()
  }

  async function requireSchedule (sessionId: string, id: string): Promise<StoredSchedule> {
    await requireSession(sessionId)
    const row = await store.find(sessionId, id)
    if (row === undefined) throw new ScheduleNotFound()
    return row
  }

  function zonedTime (value: string, field: string): number {
    const ms = Date.parse(value)
    if (Number.isNaN(ms) || writtenOffset(value) === null) throw new BadRequest(`${field} must be ${ZONED}`)
    return ms
  }

  /** What a scheduled send-status body names, checked now so a bad one fails at once rather than at its run. */
  async function checkStatus (sessionId: string, status: SendStatusBody): Promise<string | null> {
    parseTargetNumbers(status.targetNumbers, 'body.status.targetNumbers')
    // an audience is checked now and resolved at each run (the contacts then; a saved audience deleted
    // meanwhile fails that run)
    checkRecipientFields(status, 'body.status')
    const audience = status.audience === undefined ? null : checkAudience(status.audience, 'body.status.audience')
    if (audience?.type === 'saved' && await deps.audiences.findInfo(sessionId, audience.audienceId) === undefined) {
      throw new BadRequest(`body.status.audience.audienceId: no saved audience ${audience.audienceId} in this session`)
    }
    if (status.type === 'url') {
      try { parseHttpUrl(status.content) } catch { throw new BadRequest('body.status.content must be an http(s) URL for type url') }
    }
    if (status.type !== 'image' && status.type !== 'video' && status.type !== 'audio') return null
    if (!await deps.uploadExists(status.content)) throw new BadRequest('body.status.content: uploaded file not found (upload it first; the schedule keeps it until the schedule is deleted)')
    return status.content
  }

  function checkRepeat (repeat: RepeatBody, firstAt: number, at: string): StoredRepeat {
    if (repeat.unit === 'seconds' && !config.schedules.allowSeconds) throw new BadRequest("body.repeat.unit 'seconds' is for tests only (SCHEDULE_ALLOW_SECONDS)")
    if ((repeat.timeOfDay !== undefined) && repeat.unit !== 'days' && repeat.unit !== 'weeks') throw new BadRequest("body.repeat.timeOfDay needs unit 'days' or 'weeks'")
    if (repeat.timeZone !== undefined && !isTimeZone(repeat.timeZone)) throw new BadRequest(`body.repeat.timeZone is not a known IANA time zone: ${repeat.timeZone}`)
    if (repeat.until !== undefined && zonedTime(repeat.until, 'body.repeat.until') < firstAt) throw new BadRequest('body.repeat.until must not be before body.at')
    return { rule: repeat, offsetMinutes: writtenOffset(at) ?? 0 }
  }

  async function view (row: StoredSchedule): Promise<Schedule> {
    const stored = row.repeat === null ? null : (JSON.parse(row.repeat) as StoredRepeat).rule
    return {
      id: row.id,
      sessionId: row.sessionId,
      state: row.state,
      status: bodyOf(row),
      at: iso(row.firstAt),
      repeat: stored,
      nextRunAt: row.nextRunAt === null ? null : iso(row.nextRunAt),
      deferredUntil: row.deferredUntil === null ? null : iso(row.deferredUntil),
      runCount: row.runCount,
      createdAt: iso(row.createdAt),
      updatedAt: iso(row.updatedAt),
      runs: (await store.runs(row.id)).map(toRun)
    }
  }

  /** The first run at or after `from`, or null (the rule has none left: until passed, count reached). */
  function nextFrom (firstAt: number, repeat: string | null, from: number, runCount: number): number | null {
    const rule = ruleOf({ repeat })
    if (rule?.count !== undefined && runCount >= rule.count) return null
    if (rule === null && runCount > 0) return null
    return runAtOrAfter(firstAt, rule, from)
  }

  async function create (sessionId: string, body: CreateScheduleBody): Promise<{ id: string, nextRunAt: string | null }> {
    await requireSession(sessionId)
    const t = now()
    const firstAt = zonedTime(body.at, 'body.at')
    if (firstAt < t) throw new BadRequest('body.at is in the past')
    const repeat = body.repeat === undefined ? null : JSON.stringify(checkRepeat(body.repeat, firstAt, body.at))
    const mediaFile = await checkStatus(sessionId, body.status)
    const next = nextFrom(firstAt, repeat, firstAt, 0)
    if (next === null) throw new BadRequest('body.repeat allows no run at all (check until, weekdays and timeOfDay)')
    const id = `sch_${randomBytes(12).toString('base64url')}`
    await store.insert({
      id, sessionId, body: JSON.stringify(body.status), mediaFile, firstAt, repeat,
      state: 'active', nextRunAt: next, deferredUntil: null, createdAt: t, updatedAt: t
    })
    deps.log.info({ sessionId, scheduleId: id, nextRunAt: iso(next) }, 'status scheduled')
    return { id, nextRunAt: iso(next) }
  }

  async function list (sessionId: string): Promise<Schedule[]> {
    await requireSession(sessionId)
    return await Promise.all((await store.list(sessionId)).map(view))
  }

  async function get (sessionId: string, id: string): Promise<Schedule> {
    return await view(await requireSchedule(sessionId, id))
  }

  async function update (sessionId: string, id: string, patch: UpdateScheduleBody): Promise<Schedule> {
    const row = await requireSchedule(sessionId, id)
    const t = now()
    let firstAt = row.firstAt
    let atText = iso(row.firstAt)
    if (patch.at !== undefined) {
      firstAt = zonedTime(patch.at, 'body.at')
      if (firstAt < t) throw new BadRequest('body.at is in the past')
      atText = patch.at
    }
    let repeat = row.repeat
    if (patch.repeat === null) repeat = null
    else if (patch.repeat !== undefined) repeat = JSON.stringify(checkRepeat(patch.repeat, firstAt, atText))
    else if (repeat !== null && patch.at !== undefined) repeat = JSON.stringify(checkRepeat((JSON.parse(repeat) as StoredRepeat).rule, firstAt, atText))
    const mediaFile = patch.status === undefined ? row.mediaFile : await checkStatus(sessionId, patch.status)
    // a new time or rule starts the count again; runs already recorded stay on record
    const restart = patch.at !== undefined || patch.repeat !== undefined
    const runCount = restart ? 0 : row.runCount
    const next = nextFrom(firstAt, repeat, restart ? Math.max(firstAt, t) : Math.max(row.nextRunAt ?? t, t), runCount)
    const state = row.state === 'paused' ? 'paused' : next === null ? 'done' : 'active'
    await store.update(row.id, {
      ...(patch.status !== undefined ? { body: JSON.stringify(patch.status), mediaFile } : {}),
      firstAt, repeat, nextRunAt: next, runCount, state, deferredUntil: null
    }, t)
    if (row.mediaFile !== mediaFile) await deps.releaseMedia(row.mediaFile)
    return await get(sessionId, id)
  }

  async function pause (sessionId: string, id: string): Promise<Schedule> {
    const row = await requireSchedule(sessionId, id)
    if (row.state === 'active') await store.update(row.id, { state: 'paused' }, now())
    return await get(sessionId, id)
  }

  /** Runs that fell due while it was paused are skipped (not missed): it goes on with the next one from now. */
  async function resume (sessionId: string, id: string): Promise<Schedule> {
    const row = await requireSchedule(sessionId, id)
    if (row.state === 'paused') {
      const t = now()
      const next = nextFrom(row.firstAt, row.repeat, Math.max(row.nextRunAt ?? t, t), row.runCount)
      await store.update(row.id, { state: next === null ? 'done' : 'active', nextRunAt: next, deferredUntil: null }, t)
    }
    return await get(sessionId, id)
  }

  async function remove (sessionId: string, id: string): Promise<{ id: string, message: string }> {
    const row = await requireSchedule(sessionId, id)
    await store.remove(row.id)
    await deps.releaseMedia(row.mediaFile)
    return { id: row.id, message: 'Schedule deleted' }
  }

  return { create, list, get, update, pause, resume, remove }
}

export type ScheduleService = ReturnType<typeof createScheduleService>
