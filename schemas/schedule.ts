import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema, Nullable, SESSION_ID_PATTERN } from './common.js'
import { SendStatusBodySchema } from './status.js'

// Scheduled statuses (issue 24). The rule's meaning: src/schedules/recurrence.ts; the docs: docs/schedules.md.

const WeekdaySchema = Type.Union(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => Type.Literal(d)))
const ZonedTime = (description: string) => Type.String({ format: 'date-time', description })

export const RepeatSchema = Type.Object({
  every: Type.Integer({ minimum: 1, maximum: 10_000, description: 'Run every N units' }),
  unit: Type.Union(['minutes', 'hours', 'days', 'weeks', 'seconds'].map((u) => Type.Literal(u)), {
    description: "'minutes', 'hours', 'days' or 'weeks'; 'seconds' only when SCHEDULE_ALLOW_SECONDS is on (tests)"
  }),
  until: Type.Optional(ZonedTime('No run after this time (ISO 8601 with a zone)')),
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'At most this many runs (fired, failed and missed ones count)' })),
  timeOfDay: Type.Optional(Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: "days and weeks: the wall-clock time of each run, 'HH:MM' (default: the time of `at`)" })),
  weekdays: Type.Optional(Type.Array(WeekdaySchema, { minItems: 1, maxItems: 7, uniqueItems: true, description: "Only on these days ('mon' … 'sun'); weeks: the days of each week (default: the day of `at`)" })),
  timeZone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "IANA zone for timeOfDay and weekdays, e.g. 'Europe/Berlin' (default: the fixed offset `at` is written with)" }))
}, { additionalProperties: false, description: 'Optional: without it the schedule runs once, at `at`' })
export type RepeatBody = Static<typeof RepeatSchema>

export const CreateScheduleBodySchema = Type.Object({
  status: SendStatusBodySchema,
  at: ZonedTime('The first run: ISO 8601 with a zone (Z or ±HH:MM), not in the past'),
  repeat: Type.Optional(RepeatSchema)
}, { additionalProperties: false })
export type CreateScheduleBody = Static<typeof CreateScheduleBodySchema>

export const UpdateScheduleBodySchema = Type.Object({
  status: Type.Optional(SendStatusBodySchema),
  at: Type.Optional(ZonedTime('A new first run (ISO 8601 with a zone, not in the past); the next run is computed again from it')),
  repeat: Type.Optional(Nullable(RepeatSchema))
}, { additionalProperties: false, minProperties: 1, description: 'Only the fields given change; `repeat: null` makes it a one-off' })
export type UpdateScheduleBody = Static<typeof UpdateScheduleBodySchema>

export const ScheduleParamsSchema = Type.Object({
  sessionId: Type.String({ pattern: SESSION_ID_PATTERN }),
  scheduleId: Type.String({ pattern: '^sch_[A-Za-z0-9_-]{1,40}$', description: 'Schedule id (sch_…)' })
})

export const RunStateSchema = Type.Union(['firing', 'fired', 'failed', 'missed'].map((s) => Type.Literal(s)), {
  description: "'firing' while its send is under way; 'fired' once the status was posted (statusId; the status's own state says sent or partial); " +
    "'failed' when the send failed (error); 'missed' when it was due more than SCHEDULE_GRACE_MS ago while no node could fire it"
})

export const ScheduleRunSchema = Type.Object({
  at: IsoDateSchema,
  firedAt: Nullable(IsoDateSchema),
  statusId: Nullable(Type.String({ description: 'The status it posted' })),
  state: RunStateSchema,
  late: Type.Boolean({ description: 'Fired more than 5 seconds after its time (after a restart, a failover or a deferral), within SCHEDULE_GRACE_MS' }),
  error: Nullable(Type.String())
})
export type ScheduleRun = Static<typeof ScheduleRunSchema>

export const ScheduleSchema = Type.Object({
  id: Type.String(),
  sessionId: Type.String(),
  state: Type.Union(['active', 'paused', 'done'].map((s) => Type.Literal(s)), { description: "'done' once no run is left" }),
  status: SendStatusBodySchema,
  at: IsoDateSchema,
  repeat: Nullable(RepeatSchema),
  nextRunAt: Nullable(IsoDateSchema),
  deferredUntil: Nullable(Type.String({ format: 'date-time', description: 'Pacing holds the due run back until then' })),
  runCount: Type.Integer(),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema,
  runs: Type.Array(ScheduleRunSchema, { description: 'Its runs, oldest first (the latest 500)' })
})
export type Schedule = Static<typeof ScheduleSchema>

export const CreatedScheduleSchema = Type.Object({ id: Type.String(), nextRunAt: Nullable(IsoDateSchema) })
export const DeletedScheduleSchema = Type.Object({ id: Type.String(), message: Type.String() })

/** The per-status report (`GET …/statuses/{statusId}/report`). */
export const ReportRecipientSchema = Type.Object({
  number: Type.String({ description: 'Digits, or the LID (`…@lid`) while its number is not known' }),
  deliveredAt: Nullable(IsoDateSchema),
  viewedAt: Nullable(IsoDateSchema),
  reaction: Nullable(Type.String({ description: 'The current reaction emoji' })),
  repliedAt: Nullable(Type.String({ format: 'date-time', description: 'The first reply' }))
})
export const StatusReportSchema = Type.Object({
  statusId: Type.String(),
  recipients: Type.Array(ReportRecipientSchema, { description: 'Everyone it was sent to, then anyone else who answered; the own number left out' }),
  totals: Type.Object({ recipients: Type.Integer(), delivered: Type.Integer(), viewed: Type.Integer(), reacted: Type.Integer(), replied: Type.Integer() })
})
export type StatusReport = Static<typeof StatusReportSchema>
