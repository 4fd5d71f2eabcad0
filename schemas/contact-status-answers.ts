import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema, Nullable } from './common.js'

// The account's answers to its contacts' statuses (issue 39): its like (an E2EE reaction to the status) and
// its replies (1:1 messages quoting it). Listed with each contact status (GET …/contact-statuses).

/** WA Web's status like: the green heart (oxidezap/whatsapp-rust PR #541, 2026-04-14: "💚 is WA Web's default heart"). */
export const DEFAULT_LIKE_EMOJI = '💚'

export const ContactStatusReplySchema = Type.Object({
  messageId: Type.String({ description: "The platform's message id of the reply" }),
  text: Type.String(),
  sentAt: IsoDateSchema
}, { additionalProperties: false })

/** The fields each contact status carries about the account's own answers to it. */
export const ContactStatusAnswerFields = {
  likedAt: Nullable(IsoDateSchema, { description: 'When the account liked it (POST …/like); null: not liked, or the like was taken back' }),
  likeEmoji: Nullable(Type.String(), { description: 'The like\'s emoji; null when not liked' }),
  replies: Type.Array(ContactStatusReplySchema, { description: 'The replies the account sent to it (POST …/reply), oldest first' })
}

export const NO_ANSWERS = { likedAt: null, likeEmoji: null, replies: [] }

export const ContactStatusLikeBodySchema = Type.Object({
  emoji: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 16,
    // an emoji, not words: no letters, digits or spaces (a reaction's text is one emoji)
    pattern: '^[^\\sA-Za-z0-9]+$',
    description: `The reaction's emoji; default ${DEFAULT_LIKE_EMOJI}, WA Web's like`
  }))
}, { additionalProperties: false })
export type ContactStatusLikeBody = Static<typeof ContactStatusLikeBodySchema>

export const ContactStatusLikedSchema = Type.Object({
  id: Type.String({ description: 'The status id' }),
  likedAt: Nullable(IsoDateSchema, { description: 'null once taken back (DELETE)' }),
  likeEmoji: Nullable(Type.String()),
  messageId: Type.String({ description: "The platform's message id of the reaction sent" })
}, { additionalProperties: false })
export type ContactStatusLiked = Static<typeof ContactStatusLikedSchema>

export const ContactStatusReplyBodySchema = Type.Object({
  text: Type.String({ minLength: 1, maxLength: 4096, pattern: '\\S', description: 'The reply (1 to 4,096 characters, not only spaces)' })
}, { additionalProperties: false })
export type ContactStatusReplyBody = Static<typeof ContactStatusReplyBodySchema>

export const ContactStatusReplySentSchema = Type.Object({
  id: Type.String({ description: 'The status id' }),
  messageId: Type.String({ description: "The platform's message id of the reply" }),
  sentAt: IsoDateSchema
}, { additionalProperties: false })
export type ContactStatusReplySent = Static<typeof ContactStatusReplySentSchema>
