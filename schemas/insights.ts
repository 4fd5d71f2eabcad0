import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema, NextCursorSchema, Nullable } from './common.js'

// Insights (issue 32): figures over a session's statuses, the expired ones' summaries and the live ones
// alike, and per contact. How each figure is counted: docs/insights.md.

export const INSIGHT_TYPES = ['text', 'image', 'video', 'audio', 'url'] as const
export const AUDIENCE_KINDS = ['numbers', 'list', 'contacts', 'phone', 'saved'] as const
export const CONTACT_SORTS = ['received', 'viewed', 'viewRate', 'medianViewMs', 'reactions', 'replies', 'lastViewedAt', 'number'] as const

const Count = (description: string) => Type.Integer({ minimum: 0, description })
const Rate = Nullable(Type.Number({ minimum: 0, maximum: 1 }), { description: 'viewed ÷ delivered; null when nothing was delivered' })
const Ms = (description: string) => Nullable(Type.Integer({ minimum: 0 }), { description })

const Range = {
  from: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601; statuses posted at or after it (default: `to` − 30 days)' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601; statuses posted at or before it (default: now)' }))
}

export const InsightsQuerySchema = Type.Object({
  ...Range,
  type: Type.Optional(Type.Unsafe<typeof INSIGHT_TYPES[number]>({ type: 'string', enum: [...INSIGHT_TYPES], description: 'Only statuses of this type' })),
  audience: Type.Optional(Type.String({
    pattern: `^(${AUDIENCE_KINDS.join('|')}|aud_[A-Za-z0-9_-]{1,40})$`,
    description: 'Only statuses sent to this audience kind (`numbers`: targetNumbers chose them), or to the saved audience `aud_…`'
  })),
  tz: Type.Optional(Type.String({ maxLength: 64, default: 'UTC', description: 'IANA time zone of the hours, weekdays and dates (default UTC)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'statuses per page' })),
  cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'nextCursor of the previous page of `statuses`' }))
}, { additionalProperties: false })
export type InsightsQuery = Static<typeof InsightsQuerySchema>

const countFields = {
  statuses: Count('statuses posted'),
  recipients: Count('recipient lines: everyone each status was meant for, and anyone else who viewed or answered it'),
  delivered: Count('recipient lines with a delivery receipt or a view'),
  viewed: Count('recipient lines with a view'),
  reacted: Count('recipient lines with a reaction'),
  replied: Count('recipient lines with at least one reply')
}

const AudienceKindSchema = Type.Unsafe<typeof AUDIENCE_KINDS[number]>({ type: 'string', enum: [...AUDIENCE_KINDS] })

export const InsightStatusSchema = Type.Object({
  statusId: Type.String(),
  live: Type.Boolean({ description: 'true while the status has not expired (its figures may still grow)' }),
  type: Type.String(),
  captionLength: Count('characters of the caption (of the text, for a text status)'),
  audience: Type.Object({
    kind: AudienceKindSchema,
    audienceId: Nullable(Type.String()),
    name: Nullable(Type.String({ description: "the saved audience's name when it was sent" })),
    size: Count('recipients it was sent to (contactCount)')
  }),
  postedAt: IsoDateSchema,
  recipients: countFields.recipients,
  delivered: countFields.delivered,
  viewed: countFields.viewed,
  reacted: countFields.reacted,
  replied: countFields.replied,
  viewRate: Rate,
  firstViewMs: Ms('time from posting to the first view; null without views'),
  medianViewMs: Ms('nearest-rank median of its times to view (the lower middle of an even count); null without views')
}, { title: 'InsightStatus' })

export const InsightsSchema = Type.Object({
  from: IsoDateSchema,
  to: IsoDateSchema,
  tz: Type.String(),
  totals: Type.Object({
    ...countFields,
    viewRate: Rate,
    timeToView: Type.Object({
      p50Ms: Ms('nearest-rank p50 over every view\'s time to view; null without views'),
      p90Ms: Ms('nearest-rank p90; null without views')
    })
  }),
  viewsByHour: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 24, maxItems: 24, description: 'views by hour of day in tz; index 0 = 00:00–00:59' }),
  viewsByWeekday: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 7, maxItems: 7, description: 'views by weekday in tz; index 0 = Monday … 6 = Sunday' }),
  daily: Type.Array(Type.Object({
    date: Type.String({ description: 'YYYY-MM-DD in tz; every date from `from` to `to`' }),
    statuses: countFields.statuses,
    delivered: countFields.delivered,
    viewed: countFields.viewed,
    reacted: countFields.reacted,
    replied: countFields.replied
  }), { description: 'per date the statuses were posted on' }),
  byType: Type.Array(Type.Object({ type: Type.String(), ...countFields, viewRate: Rate })),
  byAudience: Type.Array(Type.Object({
    kind: AudienceKindSchema,
    audienceId: Nullable(Type.String()),
    name: Nullable(Type.String()),
    ...countFields,
    viewRate: Rate
  })),
  statuses: Type.Array(InsightStatusSchema, { description: 'newest first, a page of `limit`' }),
  nextCursor: NextCursorSchema('next (older)')
}, { title: 'Insights' })
export type Insights = Static<typeof InsightsSchema>

export const InsightContactsQuerySchema = Type.Object({
  ...Range,
  sort: Type.Optional(Type.Unsafe<typeof CONTACT_SORTS[number]>({ type: 'string', enum: [...CONTACT_SORTS], default: 'viewed' })),
  order: Type.Optional(Type.Unsafe<'asc' | 'desc'>({ type: 'string', enum: ['asc', 'desc'], default: 'desc', description: 'ties: by number, ascending; nulls last' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'nextCursor of the previous page' })),
  format: Type.Optional(Type.Unsafe<'json' | 'csv'>({
    type: 'string', enum: ['json', 'csv'], description: 'csv: every row (no paging), as text/csv; without it, `Accept: text/csv` asks for CSV too (default json)'
  }))
}, { additionalProperties: false })
export type InsightContactsQuery = Static<typeof InsightContactsQuerySchema>

export const InsightContactSchema = Type.Object({
  number: Type.String({ description: 'digits, or `<lid>@lid` for a contact known only by its LID' }),
  name: Nullable(Type.String(), { description: "the name in the phone's contacts; null when unknown" }),
  received: Count('statuses they were a recipient line of'),
  viewed: Count('of those, how many they viewed'),
  viewRate: Rate,
  medianViewMs: Ms('nearest-rank median of their times to view; null without views'),
  reactions: Count('statuses they reacted to'),
  replies: Count('replies they sent to the statuses'),
  lastViewedAt: Nullable(IsoDateSchema, { description: 'their latest view; null: never' })
}, { title: 'InsightContact' })
export type InsightContact = Static<typeof InsightContactSchema>

export const InsightContactPageSchema = Type.Object({
  items: Type.Array(InsightContactSchema),
  nextCursor: NextCursorSchema()
})
export type InsightContactPage = Static<typeof InsightContactPageSchema>

export const CONTACT_CSV_COLUMNS = ['number', 'name', 'received', 'viewed', 'viewRate', 'medianViewMs', 'reactions', 'replies', 'lastViewedAt'] as const
