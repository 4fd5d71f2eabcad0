import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema, SessionIdSchema } from './common.js'

export const SCOPES = ['read', 'send', 'manage'] as const
export type Scope = typeof SCOPES[number]

export const ScopeSchema = Type.Unsafe<Scope>({
  type: 'string',
  enum: [...SCOPES],
  description: '`read`: GET routes; `send`: publish and delete statuses, upload media; `manage`: create, re-link and delete sessions, webhooks, saved audiences and schedules'
})

const SessionsSchema = Type.Union([
  Type.Literal('*'),
  Type.Array(SessionIdSchema, { maxItems: 1000, uniqueItems: true })
], { description: '`"*"`: every session, present and future; or the session ids the key may see (a `manage` key adds the sessions it creates)' })

export const CreateKeyBodySchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, description: 'A label for people (the client, the tenant)' }),
  sessions: SessionsSchema,
  scopes: Type.Array(ScopeSchema, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true })
}, { additionalProperties: false })
export type CreateKeyBody = Static<typeof CreateKeyBodySchema>

export const KeyParamsSchema = Type.Object({ id: Type.String({ pattern: '^[0-9a-f]{16}$', description: 'Key id (16 hex digits, the middle of `stk_<id>_<secret>`)' }) })

export const KeySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  sessions: Type.Union([Type.Literal('*'), Type.Array(Type.String())]),
  scopes: Type.Array(Type.String()),
  createdAt: IsoDateSchema
})
export type KeyView = Static<typeof KeySchema>

export const KeyWithSecretSchema = Type.Object({
  ...KeySchema.properties,
  key: Type.String({ description: '`stk_<id>_<secret>`: send it as `x-api-key` or `Authorization: Bearer`. Shown only in this answer; the service keeps a hash' })
})

export const KeyDeletedSchema = Type.Object({ id: Type.String(), message: Type.String() })

/** Who the calling key is: the admin key, or a scoped key with its sessions and scopes. */
export const WhoAmISchema = Type.Object({
  admin: Type.Boolean(),
  id: Type.Union([Type.String(), Type.Null()], { description: 'null for the admin key' }),
  name: Type.Union([Type.String(), Type.Null()]),
  sessions: Type.Union([Type.Literal('*'), Type.Array(Type.String())]),
  scopes: Type.Array(Type.String())
})
