import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ContactStatusParamsSchema } from '../../schemas/contact-statuses.js'
import {
  ContactStatusLikeBodySchema, ContactStatusLikedSchema, ContactStatusReplyBodySchema, ContactStatusReplySentSchema, DEFAULT_LIKE_EMOJI
} from '../../schemas/contact-status-answers.js'
import { failures, Ok } from '../../schemas/envelope.js'

// The account answering a contact's status (issue 39; answers.ts): like, take the like back, reply. Each sends
// through the session's socket, so the node that owns the session answers (`placement: 'owner'`).

const tags = ['contact-statuses']

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { answers } = app.contactStatuses

  app.post('/sessions/:sessionId/contact-statuses/:statusId/like', {
    config: { scope: 'send', placement: 'owner' },
    schema: {
      tags,
      summary: "Like a contact's status: WhatsApp's E2EE reaction to it, sent to the poster's devices",
      description: `The reaction names the status (its id and poster); \`emoji\` defaults to ${DEFAULT_LIKE_EMOJI}, WA Web's like. ` +
        'Sent on every call (a second like replaces the first, as a reaction does); recorded (`likedAt`) once the platform acknowledged it. ' +
        'The session must be connected.',
      params: ContactStatusParamsSchema,
      body: ContactStatusLikeBodySchema,
      response: { 200: Ok(ContactStatusLikedSchema), ...failures(400, 404, 500, 503) }
    }
  }, async (req) => ({ success: true as const, data: await answers.like(req.params.sessionId, req.params.statusId, req.body?.emoji) }))

  app.delete('/sessions/:sessionId/contact-statuses/:statusId/like', {
    config: { scope: 'send', placement: 'owner' },
    schema: {
      tags,
      summary: "Take back the like of a contact's status: the same reaction with empty text, as WhatsApp removes a reaction",
      description: 'Sent whether or not a like is recorded (taking back what is not there is harmless); `likedAt` is null afterwards. The session must be connected.',
      params: ContactStatusParamsSchema,
      response: { 200: Ok(ContactStatusLikedSchema), ...failures(400, 404, 500, 503) }
    }
  }, async (req) => ({ success: true as const, data: await answers.unlike(req.params.sessionId, req.params.statusId) }))

  app.post('/sessions/:sessionId/contact-statuses/:statusId/reply', {
    config: { scope: 'send', placement: 'owner' },
    schema: {
      tags,
      summary: "Reply to a contact's status: a one-to-one message to the poster quoting the status",
      description: "The message's `contextInfo` quotes the status (`stanzaId` its id, `participant` the poster, `remoteJid` the status broadcast, " +
        '`quotedMessage` the status as it was read). Listed under the status\' `replies` once the platform acknowledged it. The session must be connected.',
      params: ContactStatusParamsSchema,
      body: ContactStatusReplyBodySchema,
      response: { 200: Ok(ContactStatusReplySentSchema), ...failures(400, 404, 500, 503) }
    }
  }, async (req) => ({ success: true as const, data: await answers.reply(req.params.sessionId, req.params.statusId, req.body.text) }))
}

export default routes
