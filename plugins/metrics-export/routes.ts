import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { failures } from '../../schemas/envelope.js'

/**
 * `GET /metrics` in the Prometheus text format. Outside /api (where Prometheus looks by default) but
 * behind the admin key (a scoped key is refused: the figures span every session), `x-api-key` or
 * `Authorization: Bearer`, and rate-limited with the same settings
 * (its own count); with METRICS_PUBLIC=true it is open and not rate-limited, for scrapers on a private network.
 */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  const open = app.config.metricsPublic
  app.get('/metrics', {
    schema: {
      tags: ['system'],
      summary: 'Prometheus metrics',
      description: 'Text exposition format 0.0.4. Needs the admin key (API_KEY) unless METRICS_PUBLIC=true; scoped keys answer 403. The metric names are listed in docs/operations.md.',
      produces: ['text/plain'],
      ...(open ? { security: [] } : {}),
      response: { 200: Type.String({ description: 'Prometheus text format' }), ...failures() }
    },
    // public as far as the keys plugin goes (outside /api): the admin key is checked here, unless METRICS_PUBLIC;
    // the global allow-list leaves everything outside /api alone: this route opts back in
    config: { public: true, rateLimit: open ? false : { allowList: () => false } },
    preHandler: open ? [] : [app.requireAdmin]
  }, async (req, reply) => {
    const body = await app.metrics.scrape((err) => { req.log.warn({ err }, 'a metrics source failed') })
    return await reply.type(app.metrics.registry.contentType).send(body)
  })
}

export default routes
