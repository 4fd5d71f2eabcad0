import { Type } from '@sinclair/typebox'

export const SESSION_ID_PATTERN = '^[A-Za-z0-9_-]{1,64}$'
export const PHONE_PATTERN = '^[0-9]{10,15}$'
/** The phone-number rule in words, for descriptions and error messages. */
export const PHONE_RULE = '10 to 15 digits including country code, no plus sign'

export const SessionIdSchema = Type.String({ pattern: SESSION_ID_PATTERN, minLength: 1, maxLength: 64, description: 'Letters, digits, underscore and hyphen; at most 64 characters' })
export const PhoneNumberSchema = Type.String({ pattern: PHONE_PATTERN, description: PHONE_RULE })
export const IsoDateSchema = Type.String({ format: 'date-time', description: 'ISO 8601 timestamp' })

export const SessionParamsSchema = Type.Object({ sessionId: SessionIdSchema })
export const StatusParamsSchema = Type.Object({
  sessionId: SessionIdSchema,
  statusId: Type.String({ pattern: '^[0-9]{1,15}$', description: 'Numeric status id' })
})

/** `s` or null (options such as a description go on the union). */
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(s: T, opts: { description?: string } = {}) => Type.Union([s, Type.Null()], opts)

/** The query fields every paged list takes (audiences, contacts, webhook deliveries). */
export const PageQueryFields = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'nextCursor of the previous page' }))
}

/** A page's `nextCursor`; `next` names the way the list goes (`next (older)`). */
export const NextCursorSchema = (next = 'next') => Nullable(Type.String(), { description: `pass as cursor for the ${next} page; null on the last page` })
