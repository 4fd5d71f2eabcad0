import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { failures, Ok } from '../../schemas/envelope.js'
import { EventPageSchema, EventsQuerySchema } from '../../schemas/event-log.js'
import { SessionNotFound } from '../../src/errors.js'
import { payloadOf } from './replay.js'

/** The sessions the request's key may see (null: all): set by the key check (plugins/auth/index.ts). */
export function keySessions (req: FastifyRequest): readonly string[] | null {
  return req.keySessionIds
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/events', {
    config: { scope: 'read' },
    schema: {
      tags: ['events'],
      operationId: 'listEvents',
      summary: 'Catch up: the logged events after an eventId, in order',
      description: 'Every event that reports a change (not QR or pairing codes) is kept for EVENTS_RETENTION_HOURS with its eventId, ' +
        'which increases in commit order. Page with `next`. The same events, with the same ids, reach socket.io clients and webhooks; ' +
        'a socket.io client can instead connect with `auth.after` and gets them before live ones.',
      querystring: EventsQuerySchema,
      response: { 200: Ok(EventPageSchema), ...failures(400, 404) }
    }
  }, async (req) => {
    const after = req.query.after ?? 0
    const scope = keySessions(req)
    if (req.query.sessionId !== undefined && scope !== null && !scope.includes(req.query.sessionId)) throw new SessionNotFound()
    const page = await app.eventLog.page(after, req.query.limit ?? 100, {
      ...(req.query.sessionId !== undefined ? { sessionId: req.query.sessionId } : {}),
      sessionIds: scope
    })
    return {
      success: true as const,
      data: {
        events: page.map((e) => ({ eventId: e.eventId, type: e.type, timestamp: e.timestamp, data: payloadOf(e) })),
        next: page.length > 0 ? page[page.length - 1].eventId : after
      }
    }
  })
}

export default routes
