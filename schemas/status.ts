import { Type, type Static } from '@sinclair/typebox'
import { AudienceSnapshotSchema, SendAudienceSchema } from './audience.js'
import { IsoDateSchema, Nullable } from './common.js'

export const StatusTypeSchema = Type.Union(['text', 'image', 'video', 'audio', 'url'].map((t) => Type.Literal(t)))

export const SendStatusBodySchema = Type.Object({
  type: Type.Union([Type.Literal('text'), Type.Literal('image'), Type.Literal('video'), Type.Literal('audio'), Type.Literal('url')]),
  content: Type.String({ minLength: 1, maxLength: 65536, description: 'text: the body; image/video/audio: a filename returned by upload; url: a direct http(s) media URL' }),
  caption: Type.Optional(Type.String({ maxLength: 4096, description: 'For image, video and url; ignored for text and audio (the platform\'s audio carries no caption)' })),
  targetNumbers: Type.Optional(Type.String({ maxLength: 1_000_000, description: 'Comma-separated numbers with country code, no plus sign; empty: own number only. Not together with `audience`' })),
  audience: Type.Optional(SendAudienceSchema),
  mentions: Type.Optional(Type.Array(Type.String({ pattern: '^[0-9]{10,15}$' }), {
    maxItems: 5,
    description: 'Numbers (country code, no plus sign) the status mentions, at most 5 (WhatsApp\'s limit): named in the post, and each told by ' +
      'a status mention message as WhatsApp Web tells them. A mentioned number outside the audience is added to it (so the one told can open ' +
      'the status). The own number is ignored. Kept by a schedule as part of its `status`'
  })),
  backgroundColor: Type.Optional(Type.String({ pattern: '^#([0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$', description: 'Text statuses: #RRGGBB or #AARRGGBB' })),
  font: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, description: 'Text statuses: platform font number' })),
  wait: Type.Optional(Type.Boolean({
    description: 'true (default): answer once the send ended (200). false: answer 202 with `state: sending` as soon as the status is recorded; ' +
      'progress follows as `status-send-progress`, the end as `status-sent` (or `statuses-updated` with action `partial` / `send-failed`). ' +
      'Without this field every request waits (200), unless the operator set SEND_WAIT_MAX_RECIPIENTS (unset by default): then lists longer than it answer 202.'
  }))
}, { additionalProperties: false })
export type SendStatusBody = Static<typeof SendStatusBodySchema>

export const UnreachableSchema = Type.Array(Type.String(), {
  description: 'Recipient numbers the status was not sent to: the account is LID-migrated and the platform knows no LID for them ' +
    '(no WhatsApp account, or not reachable by LID; see docs/platform.md). Not counted in sentCount; empty when every recipient was reachable.'
})

export const SendStateSchema = Type.Union([Type.Literal('sending'), Type.Literal('sent'), Type.Literal('partial')], {
  description: "'sending' while chunks go out (or until a send interrupted by a restart is resumed), 'sent' once every recipient has it, " +
    "'partial' when sending stopped part-way (logout, no reconnect in time, restart, an error): `sentCount` recipients have it and a revoke reaches exactly them"
})

export const SendStatusResultSchema = Type.Object({
  statusId: Type.String(),
  message: Type.String({ description: 'For a partial send: how many recipients have it and why sending stopped' }),
  platformMessageId: Type.String(),
  contactCount: Type.Integer({ description: 'Recipients addressed (the own number only: 1)' }),
  state: Type.Union([Type.Literal('sent'), Type.Literal('partial')], {
    description: "'sent': the platform acknowledged every chunk without an error and every reachable recipient has it (see `unreachable`). " +
      "'partial': the link was lost for good (logout, no reconnect within SEND_RECONNECT_WAIT_MS, " +
      'shutdown), or the platform failed or refused a chunk (an error ack such as 479; 429, 503 and rate-overlimit are waited out and sent again first) ' +
      'after some chunks went out; the status is kept, listed and revocable. ' +
      'A send that stopped before anyone had it answers an error instead (500) and leaves no status.'
  }),
  sentCount: Type.Integer({ description: 'Recipients (counted like contactCount) the platform acknowledged; contactCount minus the unreachable ones when sent' }),
  unreachable: UnreachableSchema
}, {
  description: 'HTTP 200 for both states: check `state`; a `partial` answer also comes with a `statuses-updated` event (action `partial`).'
})

export const SendStatusAcceptedSchema = Type.Object({
  statusId: Type.String(),
  message: Type.String(),
  platformMessageId: Type.String(),
  contactCount: Type.Integer({ description: 'Recipients addressed (the own number only: 1)' }),
  state: Type.Literal('sending')
}, {
  description: 'HTTP 202: the status is recorded (`state: sending` in the list) and goes out in the background. Follow `status-send-progress` ' +
    'and `status-sent`, or `statuses-updated` with action `partial` or `send-failed`; a restart resumes it.'
})

export const SentStatusSchema = Type.Object({
  id: Type.String({ description: 'Numeric status id' }),
  type: StatusTypeSchema,
  content: Type.String(),
  caption: Type.String(),
  timestamp: IsoDateSchema,
  platformMessageId: Type.String(),
  contactCount: Type.Integer(),
  targetNumbers: Type.String({ description: "As requested; '' when `audience` chose the recipients" }),
  audience: Nullable(AudienceSnapshotSchema, { description: 'How the recipients were chosen and who they were (send-status `audience`); null when targetNumbers named them' }),
  viewerCount: Type.Integer({ description: 'Real viewers so far' }),
  reactionCount: Type.Integer({ description: 'Contacts whose reaction (like or emoji) stands' }),
  replyCount: Type.Integer({ description: 'Replies received' }),
  error: Type.Union([Type.String(), Type.Null()], { description: "Why a partial send stopped (e.g. the platform's refusal code), or a rejection the platform reported later for a status an earlier run sent; null when fine" }),
  state: SendStateSchema,
  sentCount: Type.Integer({ description: 'Recipients (counted like contactCount) that have it so far' }),
  unreachable: UnreachableSchema,
  mentions: Type.Array(Type.String(), { description: 'The numbers the status mentions (send-status `mentions`); empty when none' })
})
export type SentStatus = Static<typeof SentStatusSchema>

export const ViewerSchema = Type.Object({
  jid: Type.String({ description: '<number>@s.whatsapp.net, or the LID (<lid>@lid) while the number is not known' }),
  number: Type.Union([Type.String(), Type.Null()], {
    description: 'Viewer digits; null for a viewer the platform named by a LID whose number is not known yet (it is filled in, with a status-viewers-update, once known)'
  }),
  viewedAt: IsoDateSchema,
  isReal: Type.Boolean({ description: 'false when the viewer is the session\'s own account' })
})
export type Viewer = Static<typeof ViewerSchema>

const ContactJid = Type.String({ description: '<number>@s.whatsapp.net, or the LID (<lid>@lid) while the number is not known' })
const ContactNumber = Type.Union([Type.String(), Type.Null()], {
  description: 'Contact digits; null for a contact the platform named by a LID whose number is not known yet (filled in once known)'
})

export const ReactionSchema = Type.Object({
  jid: ContactJid,
  number: ContactNumber,
  emoji: Type.String({ description: 'The reaction (a like is an emoji too); empty only in a `status-reaction` event that takes it back' }),
  reactedAt: IsoDateSchema
}, { title: 'StatusReaction' })
export type Reaction = Static<typeof ReactionSchema>

export const ReplySchema = Type.Object({
  jid: ContactJid,
  number: ContactNumber,
  text: Type.String({ description: 'The reply\'s text (a media reply: its caption, possibly empty)' }),
  repliedAt: IsoDateSchema,
  messageId: Type.String({ description: 'Platform message id of the reply' })
}, { title: 'StatusReply' })
export type Reply = Static<typeof ReplySchema>

export const DeleteStatusQuerySchema = Type.Object({
  revoke: Type.Optional(Type.Boolean({ default: false, description: 'Also ask the platform to revoke the status for its recipients' })),
  forget: Type.Optional(Type.Boolean({
    default: false,
    description: 'Keep no insights summary of it either (by default its summary stays, as when it expires; see docs/insights.md)'
  }))
})

export const DeletedStatusSchema = Type.Object({
  statusId: Type.String(),
  message: Type.String(),
  deletedFromPlatform: Type.Boolean({ description: 'true only when ?revoke=true and the platform acknowledged every chunk of the revoke without an error; otherwise false, and `note` says why (a refusal with its code)' }),
  deletedFromDatabase: Type.Boolean(),
  deletedImageFile: Type.Boolean(),
  note: Type.String()
})

export const UploadResultSchema = Type.Object({
  success: Type.Literal(true),
  filename: Type.String(),
  data: Type.Object({
    filename: Type.String(),
    size: Type.Integer(),
    mimeType: Type.String(),
    seconds: Type.Optional(Type.Integer({ minimum: 1, description: 'Audio uploads: the duration read from the file, in whole seconds' }))
  })
})
