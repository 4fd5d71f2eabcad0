import fp from 'fastify-plugin'
import { findSession } from '../../src/db/repositories/sessions.js'
import { createAudienceResolver, type PhoneContacts } from './resolve.js'
import { createAudienceService } from './service.js'

export type Audiences = ReturnType<typeof createAudienceService> & ReturnType<typeof createAudienceResolver>

declare module 'fastify' {
  interface FastifyInstance {
    /** saved audiences (service.ts) and send-status `audience` resolution (resolve.ts) */
    audiences: Audiences
  }
}

export default fp(async (app) => {
  // transitional: the session look-up moves to the sessions store (st-sessions)
  const sessionExists = async (sessionId: string): Promise<boolean> => await findSession(app.db.db, sessionId) !== undefined
  const service = createAudienceService({ audiences: app.stores.audiences, sessionExists, log: app.log.child({ plugin: 'audiences' }) })
  // the phone's saved contacts and status privacy come from the contacts plugin, looked up when an audience
  // needs them (so the two plugins may register in either order); without it those audiences answer 409
  const contacts = (): PhoneContacts | undefined => app.hasDecorator('contacts') ? app.contacts : undefined
  const resolver = createAudienceResolver({ audiences: app.stores.audiences, contacts })
  app.decorate('audiences', { ...service, ...resolver })
}, { name: 'audiences', dependencies: ['db'] })
