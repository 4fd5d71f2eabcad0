import { Type, type Static } from '@sinclair/typebox'
import { ContactStatusAnswerFields } from './contact-status-answers.js'
import { IsoDateSchema, NextCursorSchema, Nullable, PageQueryFields, SessionIdSchema } from './common.js'

// Contacts' statuses: what the session's contacts post, as the platform delivers it (issue 30), kept 24 hours.

export const ContactStatusTypeSchema = Type.Union(
  ['text', 'image', 'video', 'audio', 'other', 'undecryptable'].map((t) => Type.Literal(t)),
  { description: "'undecryptable': it arrived but could not be read (see `error`); 'other': a kind the service does not read" }
)

export const ContactStatusSchema = Type.Object({
  id: Type.String({ description: "The platform's message id of the status (`statusId` in the routes below)" }),
  number: Nullable(Type.String(), { description: "The poster's number (digits); null while only their LID is known" }),
  lid: Nullable(Type.String(), { description: 'The poster\'s LID as `<lid>@lid`; null for a contact the platform named by number' }),
  jid: Type.String({ description: 'The poster as the platform named them' }),
  type: ContactStatusTypeSchema,
  text: Nullable(Type.String(), { description: 'The text of a text status' }),
  caption: Nullable(Type.String(), { description: 'The caption of a media status' }),
  mediaType: Nullable(Type.String(), { description: 'MIME type of the media' }),
  mediaSize: Nullable(Type.Integer(), { description: 'Size of the media in bytes, as the status states it (nothing is downloaded unless asked)' }),
  postedAt: IsoDateSchema,
  receivedAt: IsoDateSchema,
  viewedAt: Nullable(IsoDateSchema, { description: 'When this service told the poster it was viewed (POST …/view); null: never' }),
  error: Nullable(Type.String(), { description: "Why an 'undecryptable' status could not be read" }),
  mentionsMe: Type.Boolean({ description: 'The contact mentioned this account in it (a `contact-status-mention` event announced it)' }),
  groupJid: Nullable(Type.String(), { description: 'A group status: the group it was posted in (`…@g.us`); null for an ordinary status' }),
  groupSubject: Nullable(Type.String(), { description: "A group status: the group's subject when known; null otherwise" }),
  // the account's like and replies (contact-status-answers.ts)
  ...ContactStatusAnswerFields
}, { additionalProperties: false })
export type ContactStatusView = Static<typeof ContactStatusSchema>

export const ContactStatusesQuerySchema = Type.Object({ ...PageQueryFields }, { additionalProperties: false })
export type ContactStatusesQuery = Static<typeof ContactStatusesQuerySchema>

export const ContactStatusPageSchema = Type.Object({
  statuses: Type.Array(ContactStatusSchema, { description: 'newest first; only those of the last 24 hours' }),
  nextCursor: NextCursorSchema('next (older)')
})
export type ContactStatusPage = Static<typeof ContactStatusPageSchema>

export const ContactStatusParamsSchema = Type.Object({
  sessionId: SessionIdSchema,
  statusId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._-]+$', description: "The contact status' `id`" })
})

export const ContactStatusMediaQuerySchema = Type.Object({
  download: Type.Optional(Type.Boolean({ description: 'Answer as an attachment (Content-Disposition) instead of inline' }))
}, { additionalProperties: false })

export const ContactStatusViewedSchema = Type.Object({
  id: Type.String(),
  viewedAt: IsoDateSchema,
  sent: Type.Boolean({ description: 'false when it was viewed before: no second read receipt is sent' })
})
