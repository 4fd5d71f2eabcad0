import type { Kysely, Updateable } from 'kysely'
import type { Database, RunState, ScheduleRow, ScheduleRunRow, ScheduleTable } from '../database.js'

// Queries on `schedules` and `schedule_runs` (issue 24); the same on SQLite and PostgreSQL. Not a hot path:
// a node reads the due schedules once a second.

type Db = Kysely<Database>

export async function insertSchedule (db: Db, row: Omit<ScheduleTable, 'run_count'>): Promise<void> {
  await db.insertInto('schedules').values(row).execute()
}

export async function findSchedule (db: Db, sessionId: string, id: string): Promise<ScheduleRow | undefined> {
  return await db.selectFrom('schedules').selectAll().where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
}

export async function listSchedules (db: Db, sessionId: string): Promise<ScheduleRow[]> {
  return await db.selectFrom('schedules').selectAll().where('session_id', '=', sessionId).orderBy('created_at').orderBy('id').execute()
}

export type SchedulePatch = Omit<Updateable<ScheduleTable>, 'id' | 'session_id' | 'created_at' | 'updated_at'>

export async function updateSchedule (db: Db, id: string, patch: SchedulePatch, now: number): Promise<boolean> {
  const r = await db.updateTable('schedules').set({ ...patch, updated_at: now }).where('id', '=', id).executeTakeFirst()
  return Number(r.numUpdatedRows) > 0
}

export async function deleteSchedule (db: Db, id: string): Promise<boolean> {
  const r = await db.deleteFrom('schedules').where('id', '=', id).executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}

/** A schedule's runs, oldest first (the latest `limit`). */
export async function runsOf (db: Db, scheduleId: string, limit = 500): Promise<ScheduleRunRow[]> {
  const rows = await db.selectFrom('schedule_runs').selectAll().where('schedule_id', '=', scheduleId).orderBy('at', 'desc').limit(limit).execute()
  return rows.reverse()
}

/** Active schedules whose next run is due at `now` (a deferred one once its deferral is over). */
export async function dueSchedules (db: Db, now: number, limit = 100): Promise<ScheduleRow[]> {
  return await db.selectFrom('schedules').selectAll()
    .where('state', '=', 'active')
    .where('next_run_at', '<=', now)
    .where((eb) => eb.or([eb('deferred_until', 'is', null), eb('deferred_until', '<=', now)]))
    .orderBy('next_run_at')
    .limit(limit)
    .execute()
}

export interface RunToRecord {
  state: RunState
  firedAt: number | null
  late: boolean
  error: string | null
  nodeId: string
}

/**
 * Takes the run due at `at`: moves the schedule on to `next` (null: done) only while its next run is still
 * `at` (compare-and-set: of several nodes reading the same row one wins), and records the run, in one
 * transaction. Returns the run's id, or null when another node took it (or the schedule changed).
 */
export async function takeRun (db: Db, scheduleId: string, at: number, next: number | null, run: RunToRecord, now: number): Promise<number | null> {
  return await db.transaction().execute(async (tx) => await takeRunIn(tx, scheduleId, at, next, run, now))
}

/** takeRun inside a transaction the caller holds (its events go in the same commit). */
export async function takeRunIn (tx: Db, scheduleId: string, at: number, next: number | null, run: RunToRecord, now: number): Promise<number | null> {
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

export async function finishRun (db: Db, runId: number, end: { state: RunState, statusId?: number | null, error?: string | null }): Promise<void> {
  await db.updateTable('schedule_runs')
    .set({ state: end.state, ...(end.statusId !== undefined ? { status_id: end.statusId } : {}), ...(end.error !== undefined ? { error: end.error } : {}) })
    .where('id', '=', runId)
    .execute()
}

/** The run that posted this status, if a schedule's did. */
export async function runOfStatus (db: Db, statusId: number): Promise<(ScheduleRunRow & { session_id: string }) | undefined> {
  return await db.selectFrom('schedule_runs as r').innerJoin('schedules as s', 's.id', 'r.schedule_id')
    .selectAll('r').select('s.session_id')
    .where('r.status_id', '=', statusId)
    .executeTakeFirst()
}

/** Runs this node left `firing` without a status (it stopped between taking the run and recording the status). */
export async function interruptedRuns (db: Db, nodeId: string): Promise<ScheduleRunRow[]> {
  return await db.selectFrom('schedule_runs').selectAll().where('state', '=', 'firing').where('node_id', '=', nodeId).execute()
}

/** Whether a schedule names this upload. */
export async function mediaScheduled (db: Db, filename: string): Promise<boolean> {
  const row = await db.selectFrom('schedules').select('id').where('media_file', '=', filename).limit(1).executeTakeFirst()
  return row !== undefined
}
