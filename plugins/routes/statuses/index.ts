import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { SessionParamsSchema, StatusParamsSchema } from '../../../schemas/common.js'
import { failures, Ok } from '../../../schemas/envelope.js'
import {
  DeletedStatusSchema, DeleteStatusQuerySchema, SendStatusBodySchema, SendStatusResultSchema, SentStatusSchema, ViewerSchema
} from '../../../schemas/status.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/sessions/:sessionId/send-status', {
    schema: {
      tags: ['statuses'],
      summary: 'Publish a status (text, image, video or media URL) to the listed numbers, or to the own number only',
      params: SessionParamsSchema,
      body: SendStatusBodySchema,
      response: { 200: Ok(SendStatusResultSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await app.statuses.send(req.params.sessionId, req.body) }))

  app.get('/sessions/:sessionId/sent-statuses', {
    schema: {
      tags: ['statuses'],
      summary: 'Statuses sent by the session that have not expired yet, newest first',
      params: SessionParamsSchema,
      response: { 200: Ok(Type.Array(SentStatusSchema)), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await app.statuses.list(req.params.sessionId) }))

  app.get('/sessions/:sessionId/status-viewers/:statusId', {
    schema: {
      tags: ['statuses'],
      summary: 'Who viewed a status and when, first view first',
      params: StatusParamsSchema,
      response: { 200: Ok(Type.Array(ViewerSchema)), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await app.statuses.viewers(req.params.sessionId, req.params.statusId) }))

  app.delete('/sessions/:sessionId/delete-status/:statusId', {
    schema: {
      tags: ['statuses'],
      summary: 'Delete the local record of a status and its media file; with revoke=true also revoke it on the platform',
      params: StatusParamsSchema,
      querystring: DeleteStatusQuerySchema,
      response: { 200: Ok(DeletedStatusSchema), ...failures(400, 404) }
    }
  }, async (req) => ({
    success: true as const,
    data: await app.statuses.remove(req.params.sessionId, req.params.statusId, { revoke: req.query.revoke ?? false })
  }))
}

export default routes
