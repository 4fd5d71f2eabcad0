import { Type, type TObject, type TProperties } from '@sinclair/typebox'
import { SessionParamsSchema, StatusParamsSchema } from '../schemas/common.js'
import { ContactStatusesQuerySchema } from '../schemas/contact-statuses.js'
import { InsightContactsQuerySchema, InsightsQuerySchema } from '../schemas/insights.js'
import { CreateScheduleBodySchema, RepeatSchema } from '../schemas/schedule.js'
import { CreateSessionBodySchema } from '../schemas/session.js'
import { SendStatusBodySchema } from '../schemas/status.js'

// The tools' input schemas, built from the very TypeBox schemas the REST routes validate with (schemas/):
// a field added to a route's body or query (send-status's, say) appears in the tool's schema with its
// rules and description, and the service checks it again on arrival. TypeBox schemas are JSON Schema, so
// the tools list them as they are (`jsonSchemaOf`): nothing is declared twice.

/** `parts` merged into one object schema that allows no other field; a name given twice is a mistake here, not an override. */
function merge (parts: TProperties[], options: { description?: string } = {}): TObject {
  const properties: TProperties = {}
  for (const part of parts) {
    for (const [name, schema] of Object.entries(part)) {
      if (name in properties) throw new Error(`MCP input: the field ${name} comes from two schemas`)
      properties[name] = schema
    }
  }
  return Type.Object(properties, { additionalProperties: false, ...options })
}

const session = SessionParamsSchema.properties

export const ListSessionsInput = Type.Object({}, { additionalProperties: false })

/** POST /api/sessions's body: the id, the optional name (default: the id) and the number for a pairing code. */
export const LinkSessionInput = merge([
  { sessionId: CreateSessionBodySchema.properties.sessionId },
  Type.Partial(Type.Pick(CreateSessionBodySchema, ['sessionName', 'phoneNumber'])).properties
])

/** send-status's body and its session; `at` and `repeat` from the schedule body make it a scheduled status. */
export const PostStatusInput = merge([
  session,
  SendStatusBodySchema.properties,
  {
    at: Type.Optional(CreateScheduleBodySchema.properties.at),
    repeat: Type.Optional(RepeatSchema)
  }
])

export const ListSentStatusesInput = merge([
  session,
  {
    statusId: Type.Optional(StatusParamsSchema.properties.statusId),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10, description: 'Without statusId: the newest this many statuses, each with its viewers' }))
  }
])

export const ReadInsightsInput = merge([session, InsightsQuerySchema.properties])

/** the per-contact query without `format` (the tool answers JSON) */
export const ReadContactInsightsInput = merge([session, Type.Omit(InsightContactsQuerySchema, ['format']).properties])

export const ReadContactStatusesInput = merge([session, ContactStatusesQuerySchema.properties])

/** A TypeBox schema as plain JSON Schema (TypeBox's symbol keys dropped), as tools/list sends it. */
export function jsonSchemaOf (schema: TObject): { type: 'object', properties?: Record<string, object>, required?: string[] } {
  return JSON.parse(JSON.stringify(schema)) as { type: 'object', properties?: Record<string, object>, required?: string[] }
}
