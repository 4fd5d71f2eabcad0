import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema, NextCursorSchema, Nullable, PageQueryFields, PHONE_RULE, SESSION_ID_PATTERN } from './common.js'

// Audiences (issue 24): who a status goes to when the phone's contacts, its status privacy or a saved list
// decide (send-status `audience`), the snapshot kept with the status, and saved audiences. How they
// resolve: plugins/audiences/resolve.ts; the docs: docs/api.md#audiences.

/** A saved audience holds at most this many numbers; a `list` audience names at most as many. */
export const MAX_AUDIENCE_NUMBERS = 50_000
export const AUDIENCE_ID_PATTERN = '^aud_[A-Za-z0-9_-]{1,40}$'

export const AUDIENCE_TYPES = ['list', 'contacts', 'phone', 'saved'] as const
export type AudienceType = typeof AUDIENCE_TYPES[number]
export const STATUS_SETTINGS = ['contacts', 'allowlist', 'denylist'] as const
export type StatusSettingName = typeof STATUS_SETTINGS[number]

const Numbers = (description: string) => Type.Array(Type.String({ maxLength: 64 }), { maxItems: MAX_AUDIENCE_NUMBERS, description })

// One object with a `type` rather than a union of four: a wrong field then answers a sentence naming it
// (plugins/audiences/resolve.ts checks which fields go with which type) instead of "must match anyOf".
export const SendAudienceSchema = Type.Object({
  type: Type.Unsafe<AudienceType>({
    type: 'string',
    enum: [...AUDIENCE_TYPES],
    description: "`list`: exactly `numbers`; `contacts`: the phone's saved contacts (LID-only ones included), less `except`; " +
      "`phone`: whatever the phone's status privacy says (its contacts, its contacts except its deny list, or its allow list); `saved`: the saved audience `audienceId`"
  }),
  numbers: Type.Optional(Numbers(`type list: the recipients, each ${PHONE_RULE}; repeats dropped`)),
  except: Type.Optional(Numbers(`type contacts: contacts left out, each ${PHONE_RULE}, or a contact's LID (\`<lid>@lid\`)`)),
  audienceId: Type.Optional(Type.String({ maxLength: 64, description: 'type saved: a saved audience of this session (aud_…)' }))
}, {
  additionalProperties: false,
  description: "Optional; chooses the recipients instead of `targetNumbers` (never both). The post's `status_setting` follows it: " +
    '`list` and `saved`: allowlist; `contacts`: contacts, or denylist with a non-empty `except`; `phone`: the phone\'s own mode.'
})
export type SendAudience = Static<typeof SendAudienceSchema>

export const StatusSettingSchema = Type.Unsafe<StatusSettingName>({
  type: 'string',
  enum: [...STATUS_SETTINGS],
  description: "The post's `<meta status_setting>`: `contacts` (all saved contacts), `allowlist` (only these), `denylist` (contacts except these)"
})

/** What a status was meant for, as resolved when it was sent (kept with the status). */
export const AudienceSnapshotSchema = Type.Object({
  type: Type.Unsafe<AudienceType>({ type: 'string', enum: [...AUDIENCE_TYPES] }),
  audienceId: Nullable(Type.String({ description: 'type saved: the saved audience' })),
  name: Nullable(Type.String({ description: "type saved: the saved audience's name when it was sent" })),
  except: Nullable(Type.Array(Type.String(), { description: "type contacts: the contacts left out; type phone in denylist mode: the phone's deny list" })),
  mode: Nullable(StatusSettingSchema),
  statusSetting: StatusSettingSchema,
  recipients: Type.Array(Type.String(), { description: 'Who it was meant for (the own number left out): digits, or `<lid>@lid` for a contact known only by its LID' })
}, { title: 'AudienceSnapshot', description: 'How the recipients were chosen and who they were, as resolved when it was sent; `mode`: type phone, the phone\'s status privacy then' })
export type AudienceSnapshot = Static<typeof AudienceSnapshotSchema>

// Saved audiences: /api/sessions/{sessionId}/audiences

const Name = Type.String({ minLength: 1, maxLength: 100, description: 'A label for people; 1 to 100 characters, stored trimmed' })
const SavedNumbers = Type.Array(Type.String({ maxLength: 64 }), {
  minItems: 1,
  maxItems: MAX_AUDIENCE_NUMBERS,
  description: `1 to ${MAX_AUDIENCE_NUMBERS} numbers, each ${PHONE_RULE} (trimmed; repeats dropped, the first kept)`
})

export const CreateAudienceBodySchema = Type.Object({ name: Name, numbers: SavedNumbers }, { additionalProperties: false })
export type CreateAudienceBody = Static<typeof CreateAudienceBodySchema>

export const ReplaceAudienceBodySchema = CreateAudienceBodySchema

export const UpdateAudienceBodySchema = Type.Object({
  name: Type.Optional(Name),
  numbers: Type.Optional(SavedNumbers)
}, { additionalProperties: false, minProperties: 1, description: 'Only the fields given change; `numbers` replaces the whole list' })
export type UpdateAudienceBody = Static<typeof UpdateAudienceBodySchema>

export const AudienceParamsSchema = Type.Object({
  sessionId: Type.String({ pattern: SESSION_ID_PATTERN }),
  audienceId: Type.String({ pattern: AUDIENCE_ID_PATTERN, description: 'Saved audience id (aud_…)' })
})

export const AudiencesQuerySchema = Type.Object({
  ...PageQueryFields
}, { additionalProperties: false })

export const AudienceSummarySchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  count: Type.Integer({ description: 'How many numbers it holds' }),
  createdAt: IsoDateSchema,
  updatedAt: IsoDateSchema
}, { title: 'AudienceSummary' })
export type AudienceSummary = Static<typeof AudienceSummarySchema>

export const AudienceSchema = Type.Object({
  ...AudienceSummarySchema.properties,
  numbers: Type.Array(Type.String(), { description: 'Its numbers, in the order given' })
}, { title: 'Audience' })
export type Audience = Static<typeof AudienceSchema>

export const AudiencePageSchema = Type.Object({
  audiences: Type.Array(AudienceSummarySchema, { description: 'oldest first, without their numbers' }),
  nextCursor: NextCursorSchema()
})
export type AudiencePage = Static<typeof AudiencePageSchema>

export const DeletedAudienceSchema = Type.Object({ id: Type.String(), message: Type.String() })
