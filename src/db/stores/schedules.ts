import type { Kysely, Updateable } from 'kysely'
import type { Database, ScheduleRow, ScheduleRunRow, ScheduleTable } from '../database.js'

/** Where a schedule stands (the table's column holds the same; toSchedule fails to compile if they part). */
export type ScheduleState = 'active' | 'paused' | 'done'
/** How a run ended, or `firing` while it starts. */
export type RunState = 'firing' | 'fired' | 'failed' | 'missed'

/** A schedule as stored: its body, its rule and its next run (the port's own type; plugins never see the table's row). */
export interface Schedule {
  /** `sch_` + random */
  id: string
  sessionId: string
  /** the send-status body, JSON */
  body: string
  /** the upload it names, kept while the schedule exists */
  mediaFile: string | null
  firstAt: number
  /** the repeat rule, JSON; null: one run */
  repeat: string | null
  state: ScheduleState
  /** the next run's due time; null once no run is left */
  nextRunAt: number | null
  /** pacing held the due run back until then */
  deferredUntil: number | null
  runCount: number
  createdAt: number
  updatedAt: number
}

/** One run of a schedule and how it ended (recorded once per due time). */
export interface ScheduleRun {
  id: number
  scheduleId: string
  /** the due time */
  at: number
  firedAt: number | null
  statusId: number | null
  state: RunState
  late: boolean
  error: string | null
  nodeId: string | null
}

/** The one row → Schedule mapping, for both backends. */
export function toSchedule (r: ScheduleRow): Schedule {
  return {
    id: r.id,
    sessionId: r.session_id,
    body: r.body,
    mediaFile: r.media_file,
    firstAt: Number(r.first_at),
    repeat: r.repeat,
    state: r.state,
    nextRunAt: r.next_run_at === null ? null : Number(r.next_run_at),
    deferredUntil: r.deferred_until === null ? null : Number(r.deferred_until),
    runCount: Number(r.run_count),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at)
  }
}

/** The one row → ScheduleRun mapping, for both backends. */
export function toScheduleRun (r: ScheduleRunRow): ScheduleRun {
  return {
    id: Number(r.id),
    scheduleId: r.schedule_id,
    at: Number(r.at),
    firedAt: r.fired_at === null ? null : Number(r.fired_at),
    statusId: r.status_id === null ? null : Number(r.status_id),
    state: r.state,
    late: Number(r.late) === 1,
    error: r.error,
    nodeId: r.node_id
  }
}

// Scheduled statuses and their runs (issue 24, `schedules` and `schedule_runs`). The same queries on SQLite and
// PostgreSQL. Not a hot path: a node reads the due schedules once a second.

type Db = Kysely<Database>

/** A schedule to store: no run yet. */
export type NewSchedule = Omit<Schedule, 'runCount'>
/** What an update may change (`updatedAt` is the update's `now`). */
export type SchedulePatch = Partial<Pick<Schedule, 'body' | 'mediaFile' | 'firstAt' | 'repeat' | 'state' | 'nextRunAt' | 'deferredUntil' | 'runCount'>>

function toScheduleUpdate (p: SchedulePatch, now: number): Updateable<ScheduleTable> {
  return {
    ...(p.body !== undefined ? { body: p.body } : {}),
    ...(p.mediaFile !== undefined ? { media_file: p.mediaFile } : {}),
    ...(p.firstAt !== undefined ? { first_at: p.firstAt } : {}),
    ...(p.repeat !== undefined ? { repeat: p.repeat } : {}),
    ...(p.state !== undefined ? { state: p.state } : {}),
    ...(p.nextRunAt !== undefined ? { next_run_at: p.nextRunAt } : {}),
    ...(p.deferredUntil !== undefined ? { deferred_until: p.deferredUntil } : {}),
    ...(p.runCount !== undefined ? { run_count: p.runCount } : {}),
    updated_at: now
  }
}

export interface RunToRecord {
  state: RunState
  firedAt: number | null
  late: boolean
  error: string | null
  nodeId: string
}

export interface RunEnd { state: RunState, statusId?: number | null, error?: string | null }

/**
 * The port. A run's writes also run in a unit of work (`stores.transaction`, `tx.schedules`), so the run's end
 * and its event commit together, or neither does.
 */
export interface ScheduleStore {
  /**
   * Takes the run due at `at`: moves the schedule on to `next` (null: done) only while its next run is still
   * `at` (compare-and-set: of several nodes reading the same row one wins), and records the run, together.
   * The run's id, or null when another node took it (or the schedule changed).
   */
  takeRun: (scheduleId: string, at: number, next: number | null, run: RunToRecord, now: number) => Promise<number | null>
  finishRun: (runId: number, end: RunEnd) => Promise<void>
  insert: (schedule: NewSchedule) => Promise<void>
  find: (sessionId: string, id: string) => Promise<Schedule | undefined>
  /** the session's schedules in creation order */
  list: (sessionId: string) => Promise<Schedule[]>
  update: (id: string, patch: SchedulePatch, now: number) => Promise<boolean>
  remove: (id: string) => Promise<boolean>
  /** a schedule's runs, oldest first (the latest `limit`) */
  runs: (scheduleId: string, limit?: number) => Promise<ScheduleRun[]>
  /** active schedules whose next run is due at `now` (a deferred one once its deferral is over) */
  due: (now: number, limit?: number) => Promise<Schedule[]>
  /** the run that posted this status, if a schedule's did */
  runOfStatus: (statusId: number) => Promise<(ScheduleRun & { sessionId: string }) | undefined>
  /** runs this node left `firing` without a status (it stopped between taking the run and recording the status) */
  interruptedRuns: (nodeId: string) => Promise<ScheduleRun[]>
}

async function takeRunIn (tx: Db, scheduleId: string, at: number, next: number | null, run: RunToRecord, now: number): Promise<number | null> {
  const moved = await tx.updateTable('schedules')
    .set((eb) => ({
      next_run_at: next,
      state: next === null ? 'done' : 'active',
      deferred_until: null,
      run_count: eb('run_count', '+', 1),
      updated_at: now
    }))
    .where('id', '=', scheduleId)
    .where('state', '=', 'active')
    .where('next_run_at', '=', at)
    .executeTakeFirst()
  if (Number(moved.numUpdatedRows) === 0) return null
  const row = await tx.insertInto('schedule_runs')
    .values({
      schedule_id: scheduleId, at, fired_at: run.firedAt, status_id: null, state: run.state, late: run.late ? 1 : 0, error: run.error, node_id: run.nodeId
    })
    .onConflict((oc) => oc.columns(['schedule_id', 'at']).doNothing())
    .returning('id')
    .executeTakeFirst()
  return row?.id ?? null
}

export function scheduleStore (db: Db): ScheduleStore {
  return {
    async insert (s) {
      await db.insertInto('schedules').values({
        id: s.id,
        session_id: s.sessionId,
        body: s.body,
        media_file: s.mediaFile,
        first_at: s.firstAt,
        repeat: s.repeat,
        state: s.state,
        next_run_at: s.nextRunAt,
        deferred_until: s.deferredUntil,
        created_at: s.createdAt,
        updated_at: s.updatedAt
      }).execute()
    },

    async find (sessionId, id) {
      const row = await db.selectFrom('schedules').selectAll().where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
      return row === undefined ? undefined : toSchedule(row)
    },

    async list (sessionId) {
      return (await db.selectFrom('schedules').selectAll().where('session_id', '=', sessionId).orderBy('created_at').orderBy('id').execute()).map(toSchedule)
    },

    async update (id, patch, now) {
      const r = await db.updateTable('schedules').set(toScheduleUpdate(patch, now)).where('id', '=', id).executeTakeFirst()
      return Number(r.numUpdatedRows) > 0
    },

    async remove (id) {
      const r = await db.deleteFrom('schedules').where('id', '=', id).executeTakeFirst()
      return Number(r.numDeletedRows) > 0
    },

    async runs (scheduleId, limit = 500) {
      const rows = await db.selectFrom('schedule_runs').selectAll().where('schedule_id', '=', scheduleId).orderBy('at', 'desc').limit(limit).execute()
      return rows.reverse().map(toScheduleRun)
    },

    async due (now, limit = 100) {
      const rows = await db.selectFrom('schedules').selectAll()
        .where('state', '=', 'active')
        .where('next_run_at', '<=', now)
        .where((eb) => eb.or([eb('deferred_until', 'is', null), eb('deferred_until', '<=', now)]))
        .orderBy('next_run_at')
        .limit(limit)
        .execute()
      return rows.map(toSchedule)
    },

    async takeRun (scheduleId, at, next, run, now) {
      // the update and the insert commit together: in the unit of work's transaction (stores.transaction), else in one of their own
      if (db.isTransaction) return await takeRunIn(db, scheduleId, at, next, run, now)
      return await db.transaction().execute(async (trx) => await takeRunIn(trx, scheduleId, at, next, run, now))
    },

    async finishRun (runId, end) {
      await db.updateTable('schedule_runs')
        .set({ state: end.state, ...(end.statusId !== undefined ? { status_id: end.statusId } : {}), ...(end.error !== undefined ? { error: end.error } : {}) })
        .where('id', '=', runId)
        .execute()
    },

    async runOfStatus (statusId) {
      const row = await db.selectFrom('schedule_runs as r').innerJoin('schedules as s', 's.id', 'r.schedule_id')
        .selectAll('r').select('s.session_id')
        .where('r.status_id', '=', statusId)
        .executeTakeFirst()
      return row === undefined ? undefined : { ...toScheduleRun(row), sessionId: row.session_id }
    },

    async interruptedRuns (nodeId) {
      return (await db.selectFrom('schedule_runs').selectAll().where('state', '=', 'firing').where('node_id', '=', nodeId).execute()).map(toScheduleRun)
    }
  }
}
