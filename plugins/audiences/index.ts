import fp from 'fastify-plugin'
import { createAudienceResolver, type PhoneContacts } from './resolve.js'
import routes from './routes.js'
import { createAudienceService } from './service.js'

export type Audiences = ReturnType<typeof createAudienceService> & ReturnType<typeof createAudienceResolver>

declare module 'fastify' {
  interface FastifyInstance {
    /** saved audiences (service.ts) and send-status `audience` resolution (resolve.ts) */
    audiences: Audiences
  }
}

export default fp(async (app) => {
  const sessionExists = async (sessionId: string): Promise<boolean> => await app.stores.sessions.find(sessionId) !== undefined
  const service = createAudienceService({ audiences: app.stores.audiences, sessionExists, log: app.log.child({ plugin: 'audiences' }) })
  // the phone's saved contacts and status privacy, kept by the contacts plugin
  const contacts = (): PhoneContacts | undefined => app.contacts
  const resolver = createAudienceResolver({ audiences: app.stores.audiences, contacts })
  app.decorate('audiences', { ...service, ...resolver })
  await app.register(routes, { prefix: '/api' })
}, { name: 'audiences', dependencies: ['db', 'contacts'] })
