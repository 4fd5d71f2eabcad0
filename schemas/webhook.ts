import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { IsoDateSchema, NextCursorSchema, Nullable, PageQueryFields, SessionIdSchema } from './common.js'
import { EventSchemas, type EventName } from './events.js'

// request fields that take null use OpenAPI's `nullable` (Ajv knows it): in a union, type coercion would turn
// null into '' or [null], and a failing value would be reported against the wrong branch
const OrNull = <T extends TSchema>(s: T) => Type.Unsafe<Static<T> | null>({ ...s, nullable: true })

export const WEBHOOK_EVENT_NAMES = Object.keys(EventSchemas) as EventName[]

/** One socket.io event name; an enum so the OpenAPI document lists them and a typo is a 400 naming the field. */
export const WebhookEventNameSchema = Type.Unsafe<EventName>({ type: 'string', enum: WEBHOOK_EVENT_NAMES, description: 'A socket.io event name' })

const UrlSchema = Type.String({ minLength: 8, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', description: 'http:// or https:// address that receives the POSTs; private and loopback addresses only with ALLOW_PRIVATE_URLS=true' })
const EventsSchema = Type.Array(WebhookEventNameSchema, { minItems: 1, maxItems: WEBHOOK_EVENT_NAMES.length, uniqueItems: true, description: 'Events to send; leave out (or null) for every event' })
const DescriptionSchema = Type.String({ maxLength: 500 })

export const CreateWebhookBodySchema = Type.Object({
  url: UrlSchema,
  events: Type.Optional(OrNull(EventsSchema)),
  sessionId: Type.Optional(OrNull(SessionIdSchema)),
  description: Type.Optional(OrNull(DescriptionSchema))
}, { additionalProperties: false })
export type CreateWebhookBody = Static<typeof CreateWebhookBodySchema>

export const UpdateWebhookBodySchema = Type.Object({
  url: Type.Optional(UrlSchema),
  events: Type.Optional(OrNull(EventsSchema)),
  enabled: Type.Optional(Type.Boolean()),
  description: Type.Optional(OrNull(DescriptionSchema))
}, { additionalProperties: false, minProperties: 1 })
export type UpdateWebhookBody = Static<typeof UpdateWebhookBodySchema>

export const WebhookParamsSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'Webhook id (wh_…)' }) })
export const DeliveryParamsSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 100, description: 'Webhook id (wh_…)' }),
  deliveryId: Type.String({ pattern: '^[0-9]{1,15}$', description: 'Numeric delivery id' })
})

export const WebhookSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Nullable(Type.Array(Type.String()), { description: 'null: every event' }),
  sessionId: Nullable(Type.String(), { description: 'null: every session' }),
  description: Nullable(Type.String()),
  enabled: Type.Boolean(),
  disabledReason: Nullable(Type.String({ description: 'why the service disabled it (the receiver answered 410 Gone)' })),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema
})
export type WebhookView = Static<typeof WebhookSchema>

export const WebhookWithSecretSchema = Type.Object({
  ...WebhookSchema.properties,
  secret: Type.String({ description: 'whsec_… signing secret for Standard Webhooks; shown only here (creation and rotation)' })
})
export type WebhookWithSecret = Static<typeof WebhookWithSecretSchema>

export const DeliveryStatusSchema = Type.Union([Type.Literal('pending'), Type.Literal('sending'), Type.Literal('succeeded'), Type.Literal('failed')], {
  description: 'pending (waiting for its first or next attempt), sending, succeeded, failed (no attempts left, or the receiver answered 410)'
})

export const DeliverySchema = Type.Object({
  id: Type.String({ description: 'Numeric delivery id' }),
  messageId: Type.String({ description: 'The webhook-id header: the same on every attempt' }),
  eventType: Type.String(),
  sessionId: Nullable(Type.String()),
  status: DeliveryStatusSchema,
  attempts: Type.Integer(),
  lastStatusCode: Nullable(Type.Integer()),
  lastError: Nullable(Type.String()),
  nextAttemptAt: Nullable(IsoDateSchema, { description: 'when pending: the earliest next attempt; null otherwise' }),
  lastAttemptAt: Nullable(IsoDateSchema),
  createdAt: IsoDateSchema,
  completedAt: Nullable(IsoDateSchema)
})
export type DeliveryView = Static<typeof DeliverySchema>

export const DeliveriesQuerySchema = Type.Object({
  status: Type.Optional(DeliveryStatusSchema),
  ...PageQueryFields
}, { additionalProperties: false })

export const DeliveryPageSchema = Type.Object({
  deliveries: Type.Array(DeliverySchema, { description: 'newest first' }),
  nextCursor: NextCursorSchema('next (older)')
})

export const WebhookDeletedSchema = Type.Object({ id: Type.String(), message: Type.String() })

/** What a receiver gets: the socket.io event name, when it happened, and the socket.io payload. */
export const WebhookBodySchema = Type.Object({
  type: Type.String({ description: 'The socket.io event name' }),
  timestamp: IsoDateSchema,
  eventId: Type.Optional(Type.Integer({ description: 'The event log id (also in data); absent on QR and pairing code events, which are not logged' })),
  data: Type.Object({}, { additionalProperties: true, description: 'The socket.io payload (components Event…), with eventId for logged events' })
})
