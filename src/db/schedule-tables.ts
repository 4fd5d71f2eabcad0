import type { ColumnType, Generated } from 'kysely'
/** milliseconds since the epoch (as in database.ts) */
type Millis = number

// The tables of scheduled statuses and delivery receipts (migration 011), beside database.ts.

/** A scheduled status (issue 24): a send-status body and when it runs next. */
export interface ScheduleTable {
  /** `sch_` + random */
  id: string
  session_id: string
  /** the send-status body, JSON */
  body: string
  /** the upload it names, kept while the schedule exists */
  media_file: string | null
  first_at: Millis
  /** the repeat rule, JSON; null: one run */
  repeat: string | null
  state: ScheduleState
  /** the next run's due time; null once no run is left */
  next_run_at: Millis | null
  /** pacing held the due run back until then */
  deferred_until: Millis | null
  run_count: ColumnType<number, number | undefined, number>
  created_at: Millis
  updated_at: Millis
}

export type ScheduleState = 'active' | 'paused' | 'done'
export type RunState = 'firing' | 'fired' | 'failed' | 'missed'

/** One run of a schedule, recorded once per due time. */
export interface ScheduleRunTable {
  id: Generated<number>
  schedule_id: string
  at: Millis
  fired_at: Millis | null
  status_id: number | null
  state: RunState
  late: ColumnType<number, number | undefined, number>
  error: string | null
  node_id: string | null
}

/** A delivery receipt of a status: one per (status, recipient), the first kept. */
export interface StatusDeliveryTable {
  status_id: number
  /** `number` when known, else the LID */
  recipient: string
  number: string | null
  jid: string
  delivered_at: Millis
}
