import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { SessionParamsSchema } from '../../schemas/common.js'
import {
  ContactStatusesQuerySchema, ContactStatusMediaQuerySchema, ContactStatusPageSchema, ContactStatusParamsSchema, ContactStatusSchema, ContactStatusViewedSchema
} from '../../schemas/contact-statuses.js'
import { failures, Ok } from '../../schemas/envelope.js'

const tags = ['contact-statuses']

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { contactStatuses } = app

  app.get('/sessions/:sessionId/contact-statuses', {
    config: { scope: 'read' },
    schema: {
      tags,
      summary: "Statuses the account's contacts posted in the last 24 hours, newest first",
      description: 'Who posted (number where known, and LID), type, text or caption, media type and size, and times. ' +
        'Kept as the platform delivers them; no media is downloaded and no view receipt is sent by listing them. ' +
        'Paged: pass `nextCursor` as `cursor` for older ones.',
      params: SessionParamsSchema,
      querystring: ContactStatusesQuerySchema,
      response: { 200: Ok(ContactStatusPageSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await contactStatuses.list(req.params.sessionId, req.query) }))

  app.get('/sessions/:sessionId/contact-statuses/:statusId', {
    config: { scope: 'read' },
    schema: {
      tags,
      summary: "One contact's status",
      // the collection's GET would get the same generated id (operationIds are unique: OpenAPI 3, openapi-typescript)
      operationId: 'getSessionsContactStatus',
      params: ContactStatusParamsSchema,
      response: { 200: Ok(ContactStatusSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await contactStatuses.get(req.params.sessionId, req.params.statusId) }))

  app.get('/sessions/:sessionId/contact-statuses/:statusId/media', {
    config: { scope: 'read', placement: 'owner' },
    schema: {
      tags,
      summary: "The media of a contact's status, downloaded from the platform now and streamed (nothing is kept)",
      description: 'The only way the service downloads a contact\'s media. `download=true` answers it as an attachment. ' +
        'Fetching it sends the poster nothing (no view receipt). 404 for a status without media; 502 when the platform\'s media server does not give it.',
      params: ContactStatusParamsSchema,
      querystring: ContactStatusMediaQuerySchema,
      response: { 200: Type.Unsafe({ description: 'The decrypted media bytes (its MIME type as Content-Type)' }), ...failures(400, 404, 502, 503) }
    }
  }, async (req, reply) => {
    const { stream, mimetype } = await contactStatuses.media(req.params.sessionId, req.params.statusId)
    void reply.type(mimetype).header('cache-control', 'private, no-store')
    if (req.query.download === true) void reply.header('content-disposition', `attachment; filename="${req.params.statusId}"`)
    return await reply.send(stream)
  })

  app.post('/sessions/:sessionId/contact-statuses/:statusId/view', {
    config: { scope: 'send', placement: 'owner' },
    schema: {
      tags,
      summary: "Tell the poster their status was viewed: sends the platform's read receipt for it (once)",
      description: 'Never sent otherwise: the account\'s owner decides who learns they looked. A second call sends nothing (`sent: false`). ' +
        'The session must be connected.',
      params: ContactStatusParamsSchema,
      response: { 200: Ok(ContactStatusViewedSchema), ...failures(400, 404, 500, 503) }
    }
  }, async (req) => ({ success: true as const, data: await contactStatuses.view(req.params.sessionId, req.params.statusId) }))
}

export default routes
