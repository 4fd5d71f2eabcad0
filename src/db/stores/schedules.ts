import type { Kysely, Updateable } from 'kysely'
import type { Database, RunState, ScheduleRow, ScheduleRunRow, ScheduleTable } from '../database.js'

/** A schedule as stored: its body, its rule and its next run: the port's own type, which plugins import (never the table's row type). */
export type ScheduleRecord = ScheduleRow
/** One run of a schedule and how it ended: the port's own type, which plugins import (never the table's row type). */
export type ScheduleRunRecord = ScheduleRunRow

// Scheduled statuses and their runs (issue 24, `schedules` and `schedule_runs`). The same queries on SQLite and
// PostgreSQL. Not a hot path: a node reads the due schedules once a second.

type Db = Kysely<Database>

export type NewSchedule = Omit<ScheduleTable, 'run_count'>
export type SchedulePatch = Omit<Updateable<ScheduleTable>, 'id' | 'session_id' | 'created_at' | 'updated_at'>

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
  insert: (row: NewSchedule) => Promise<void>
  find: (sessionId: string, id: string) => Promise<ScheduleRecord | undefined>
  /** the session's schedules in creation order */
  list: (sessionId: string) => Promise<ScheduleRecord[]>
  update: (id: string, patch: SchedulePatch, now: number) => Promise<boolean>
  remove: (id: string) => Promise<boolean>
  /** a schedule's runs, oldest first (the latest `limit`) */
  runs: (scheduleId: string, limit?: number) => Promise<ScheduleRunRecord[]>
  /** active schedules whose next run is due at `now` (a deferred one once its deferral is over) */
  due: (now: number, limit?: number) => Promise<ScheduleRecord[]>
  /** the run that posted this status, if a schedule's did */
  runOfStatus: (statusId: number) => Promise<(ScheduleRunRecord & { session_id: string }) | undefined>
  /** runs this node left `firing` without a status (it stopped between taking the run and recording the status) */
  interruptedRuns: (nodeId: string) => Promise<ScheduleRunRecord[]>
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
    async insert (row) {
      await db.insertInto('schedules').values(row).execute()
    },

    async find (sessionId, id) {
      return await db.selectFrom('schedules').selectAll().where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
    },

    async list (sessionId) {
      return await db.selectFrom('schedules').selectAll().where('session_id', '=', sessionId).orderBy('created_at').orderBy('id').execute()
    },

    async update (id, patch, now) {
      const r = await db.updateTable('schedules').set({ ...patch, updated_at: now }).where('id', '=', id).executeTakeFirst()
      return Number(r.numUpdatedRows) > 0
    },

    async remove (id) {
      const r = await db.deleteFrom('schedules').where('id', '=', id).executeTakeFirst()
      return Number(r.numDeletedRows) > 0
    },

    async runs (scheduleId, limit = 500) {
      const rows = await db.selectFrom('schedule_runs').selectAll().where('schedule_id', '=', scheduleId).orderBy('at', 'desc').limit(limit).execute()
      return rows.reverse()
    },

    async due (now, limit = 100) {
      return await db.selectFrom('schedules').selectAll()
        .where('state', '=', 'active')
        .where('next_run_at', '<=', now)
        .where((eb) => eb.or([eb('deferred_until', 'is', null), eb('deferred_until', '<=', now)]))
        .orderBy('next_run_at')
        .limit(limit)
        .execute()
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
      return await db.selectFrom('schedule_runs as r').innerJoin('schedules as s', 's.id', 'r.schedule_id')
        .selectAll('r').select('s.session_id')
        .where('r.status_id', '=', statusId)
        .executeTakeFirst()
    },

    async interruptedRuns (nodeId) {
      return await db.selectFrom('schedule_runs').selectAll().where('state', '=', 'firing').where('node_id', '=', nodeId).execute()
    }
  }
}
