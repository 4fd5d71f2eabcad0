import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { SessionParamsSchema, StatusParamsSchema } from '../../schemas/common.js'
import { failures, Ok } from '../../schemas/envelope.js'
import { piecedArrayAnswer } from '../core/pieced-json.js'
import {
  DeletedStatusSchema, DeleteStatusQuerySchema, ReactionSchema, ReplySchema, type SentStatus, SentStatusSchema, ViewerSchema
} from '../../schemas/status.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  // 500 statuses are ~200 KB of JSON: sent in pieces (the pieced-json speed trick, src/speed-tricks.ts)
  const sentStatuses = piecedArrayAnswer<SentStatus>(SentStatusSchema, app.config.speedTricksOff.has('pieced-json'))
  app.get('/sessions/:sessionId/sent-statuses', {
    config: { scope: 'read' },
    schema: {
      tags: ['statuses'],
      summary: 'Statuses sent by the session that have not expired yet, newest first',
      params: SessionParamsSchema,
      response: { 200: Ok(Type.Array(SentStatusSchema)), ...failures(400, 404) }
    }
  }, async (req, reply) => sentStatuses(reply, await app.statuses.list(req.params.sessionId)))

  app.get('/sessions/:sessionId/status-viewers/:statusId', {
    config: { scope: 'read' },
    schema: {
      tags: ['statuses'],
      summary: 'Who viewed a status and when, first view first',
      params: StatusParamsSchema,
      response: { 200: Ok(Type.Array(ViewerSchema)), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await app.statuses.viewers(req.params.sessionId, req.params.statusId) }))

  app.get('/sessions/:sessionId/status-reactions/:statusId', {
    config: { scope: 'read' },
    schema: {
      tags: ['statuses'],
      summary: 'Who reacted to a status (a like is a reaction too) and with what, first first',
      description: 'One entry per contact: the latest reaction wins; a reaction taken back is left out.',
      params: StatusParamsSchema,
      response: { 200: Ok(Type.Array(ReactionSchema)), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await app.statuses.reactions(req.params.sessionId, req.params.statusId) }))

  app.get('/sessions/:sessionId/status-replies/:statusId', {
    config: { scope: 'read' },
    schema: {
      tags: ['statuses'],
      summary: 'Replies to a status, oldest first',
      params: StatusParamsSchema,
      response: { 200: Ok(Type.Array(ReplySchema)), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await app.statuses.replies(req.params.sessionId, req.params.statusId) }))

  app.delete('/sessions/:sessionId/delete-status/:statusId', {
    // a revoke needs the session's socket; deleting the record alone is answered anywhere
    config: { scope: 'send', placement: 'owner', placementIf: (req) => (req.query as { revoke?: boolean }).revoke === true },
    schema: {
      tags: ['statuses'],
      summary: 'Delete the local record of a status and its media file; with revoke=true also revoke it on the platform',
      description: 'A revoke reaches exactly the recipients that have the status (for a partial one, those counted in sentCount). ' +
        'A status still being sent answers 409. Its insights summary stays, as when it expires (unless INSIGHTS_RETENTION_DAYS is 0); `forget=true` keeps none.',
      params: StatusParamsSchema,
      querystring: DeleteStatusQuerySchema,
      response: { 200: Ok(DeletedStatusSchema), ...failures(400, 404, 409, 503) }
    }
  }, async (req) => ({
    success: true as const,
    data: await app.statuses.remove(req.params.sessionId, req.params.statusId, { revoke: req.query.revoke ?? false, forget: req.query.forget ?? false })
  }))
}

export default routes
