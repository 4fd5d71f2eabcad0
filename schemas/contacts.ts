import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema, NextCursorSchema, Nullable, PageQueryFields } from './common.js'

// The phone's saved contacts and status privacy, as the linked phone shares them (issue 24).

export const PhoneContactSchema = Type.Object({
  number: Nullable(Type.String(), { description: 'The contact\'s number (digits); null for a contact the phone knows by its LID only' }),
  lid: Nullable(Type.String(), { description: 'The contact\'s LID as `<lid>@lid`; null when the phone gave none' }),
  name: Nullable(Type.String(), { description: 'The name it is saved under on the phone' })
}, { additionalProperties: false })
export type PhoneContactView = Static<typeof PhoneContactSchema>

export const ContactsQuerySchema = Type.Object({
  search: Type.Optional(Type.String({ maxLength: 100, description: 'Only contacts whose name (any case) or number contains this' })),
  ...PageQueryFields
}, { additionalProperties: false })
export type ContactsQuery = Static<typeof ContactsQuerySchema>

export const ContactPageSchema = Type.Object({
  contacts: Type.Array(PhoneContactSchema, { description: 'in the order the phone\'s sync delivered them' }),
  nextCursor: NextCursorSchema()
})
export type ContactPage = Static<typeof ContactPageSchema>

export const StatusPrivacyModeSchema = Type.Union([Type.Literal('contacts'), Type.Literal('allowlist'), Type.Literal('denylist')])

export const StatusPrivacySchema = Type.Object({
  mode: Nullable(StatusPrivacyModeSchema, {
    description: 'contacts: every saved contact; denylist: every saved contact but `numbers`; allowlist: only `numbers`. ' +
      'null while the phone\'s setting is not known yet (it is read when the session connects)'
  }),
  numbers: Type.Array(Type.String(), { description: 'The mode\'s list ([] for contacts): digits, or `<lid>@lid` for a contact whose number is not known' }),
  updatedAt: Nullable(IsoDateSchema, { description: 'When the service last read it from the phone; null while not known' })
}, { additionalProperties: false })
export type StatusPrivacyView = Static<typeof StatusPrivacySchema>
