import fp from 'fastify-plugin'
import routes from './routes.js'
import { createSessionService } from './service.js'

export type SessionService = ReturnType<typeof createSessionService>

declare module 'fastify' {
  interface FastifyInstance {
    /** sessions: create, read, re-link and delete, with their platform connection */
    sessions: SessionService
  }
}

export default fp(async (app) => {
  app.decorate('sessions', createSessionService({
    sessions: app.stores.sessions,
    mediaInUse: app.stores.statuses.mediaInUse,
    platform: app.platform,
    mediaStore: app.mediaStore,
    events: app.domainEvents,
    cluster: app.cluster,
    keys: app.keys
  }))
  await app.register(routes, { prefix: '/api' })
}, { name: 'sessions', dependencies: ['db', 'domain-events', 'platform', 'media-store', 'cluster', 'auth'] })
