import fp from 'fastify-plugin'
import routes from './routes.js'

/**
 * The event log's concern: GET /api/events (catch-up by eventId). The log itself is kept by the domain
 * events plugin (plugins/domain-events/index.ts), which every plugin that reports a change uses.
 */
export default fp(async (app) => {
  await app.register(routes, { prefix: '/api' })
}, { name: 'events', dependencies: ['domain-events', 'auth'] })
