import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { SessionParamsSchema } from '../../schemas/common.js'
import { failures, Ok } from '../../schemas/envelope.js'
import {
  AudienceParamsSchema, AudiencePageSchema, AudienceSchema, AudiencesQuerySchema, AudienceSummarySchema, CreateAudienceBodySchema,
  DeletedAudienceSchema, MAX_AUDIENCE_NUMBERS, ReplaceAudienceBodySchema, UpdateAudienceBodySchema
} from '../../schemas/audience.js'

const tags = ['audiences']
const NUMBERS_RULE = `\`numbers\`: 1 to ${MAX_AUDIENCE_NUMBERS} numbers, each trimmed and checked (a 400 names every bad entry, the first 20 of them), repeats dropped.`

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { audiences } = app

  app.post('/sessions/:sessionId/audiences', {
    config: { scope: 'manage' },
    schema: {
      tags,
      summary: 'Save an audience: a named list of numbers that send-status `audience: { type: "saved", audienceId }` posts to',
      description: NUMBERS_RULE + ' The answer has its `id`.',
      params: SessionParamsSchema,
      body: CreateAudienceBodySchema,
      response: { 200: Ok(AudienceSummarySchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await audiences.create(req.params.sessionId, req.body) }))

  app.get('/sessions/:sessionId/audiences', {
    config: { scope: 'read' },
    schema: {
      tags,
      summary: "The session's saved audiences, oldest first, with their number count (not their numbers); paged",
      params: SessionParamsSchema,
      querystring: AudiencesQuerySchema,
      response: { 200: Ok(AudiencePageSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await audiences.list(req.params.sessionId, req.query) }))

  app.get('/sessions/:sessionId/audiences/:audienceId', {
    config: { scope: 'read' },
    schema: {
      tags,
      // the collection's GET would get the same generated id (operationIds are unique: OpenAPI 3, openapi-typescript)
      operationId: 'getSessionsAudience',
      summary: 'One saved audience with its numbers',
      params: AudienceParamsSchema,
      response: { 200: Ok(AudienceSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await audiences.get(req.params.sessionId, req.params.audienceId) }))

  app.put('/sessions/:sessionId/audiences/:audienceId', {
    config: { scope: 'manage' },
    schema: {
      tags,
      summary: 'Replace a saved audience: its name and all its numbers',
      description: NUMBERS_RULE + ' Statuses already sent keep the recipients they were sent to.',
      params: AudienceParamsSchema,
      body: ReplaceAudienceBodySchema,
      response: { 200: Ok(AudienceSummarySchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await audiences.replace(req.params.sessionId, req.params.audienceId, req.body) }))

  app.patch('/sessions/:sessionId/audiences/:audienceId', {
    config: { scope: 'manage' },
    schema: {
      tags,
      summary: 'Change a saved audience: its name, its numbers (replaced whole), or both',
      description: NUMBERS_RULE,
      params: AudienceParamsSchema,
      body: UpdateAudienceBodySchema,
      response: { 200: Ok(AudienceSummarySchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await audiences.update(req.params.sessionId, req.params.audienceId, req.body) }))

  app.delete('/sessions/:sessionId/audiences/:audienceId', {
    config: { scope: 'manage' },
    schema: {
      tags,
      summary: 'Delete a saved audience',
      description: 'Statuses sent to it keep their snapshot; a schedule that still names it fails its next run (scheduled-status-failed).',
      params: AudienceParamsSchema,
      response: { 200: Ok(DeletedAudienceSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await audiences.remove(req.params.sessionId, req.params.audienceId) }))
}

export default routes
