import fp from 'fastify-plugin'
import { mediaInUse } from '../../src/db/repositories/statuses.js'
import { createSessionService } from './service.js'

export type SessionService = ReturnType<typeof createSessionService>

declare module 'fastify' {
  interface FastifyInstance {
    /** sessions: create, read, re-link and delete, with their platform connection */
    sessions: SessionService
  }
}

export default fp(async (app) => {
  app.decorate('sessions', createSessionService({ sessions: app.stores.sessions, mediaInUse: async (file) => await mediaInUse(app.db.db, file), platform: app.platform, mediaStore: app.mediaStore, events: app.domainEvents, cluster: app.cluster, keys: app.keys }))
}, { name: 'sessions', dependencies: ['db', 'domain-events', 'platform', 'media-store', 'cluster', 'auth'] })
