import { Type, type Static } from '@sinclair/typebox'
import { SessionIdSchema } from './common.js'

// GET /api/events: catch-up from the event log (docs/events-log.md).

export const EventsQuerySchema = Type.Object({
  after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: 'Events with a larger eventId than this one (0: from the oldest kept)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'At most this many events' })),
  sessionId: Type.Optional(SessionIdSchema)
}, { additionalProperties: false })
export type EventsQuery = Static<typeof EventsQuerySchema>

export const LoggedEventSchema = Type.Object({
  eventId: Type.Integer({ description: 'Increases in commit order, one sequence for the whole service (every node of a cluster)' }),
  type: Type.String({ description: 'The socket.io event name (connection-status, status-sent, status-viewers-added, …)' }),
  timestamp: Type.String({ description: 'When the event was written (ISO 8601)' }),
  data: Type.Object({}, { additionalProperties: true, description: 'The payload exactly as socket.io clients and webhooks get it, eventId included' })
})

export const EventPageSchema = Type.Object({
  events: Type.Array(LoggedEventSchema, { description: 'In eventId order' }),
  next: Type.Integer({ description: 'Pass as `after` for the next page (the last eventId here, or `after` when there was none)' })
})
