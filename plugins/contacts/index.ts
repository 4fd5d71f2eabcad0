import fp from 'fastify-plugin'
import routes from './routes.js'
import { createContactsService, type ContactsService } from './service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * The linked phone's saved contacts and status privacy (service.ts): kept through `sink` by the platform,
     * read by the routes and by send-status `audience` (`savedNumbers`, `statusPrivacy`).
     */
    contacts: ContactsService
  }
}

// The platform depends on this plugin: it is created with its sink.
export default fp(async (app) => {
  const sessionExists = async (sessionId: string): Promise<boolean> => await app.stores.sessions.find(sessionId) !== undefined
  const contacts = createContactsService({ contacts: app.stores.contacts, sessionExists, log: app.log.child({ plugin: 'contacts' }) })
  app.decorate('contacts', contacts)
  // after the platform's preClose (its sockets end first): the writes it started finish before the database closes
  app.addHook('onClose', async () => { await contacts.close() })
  await app.register(routes, { prefix: '/api' })
}, { name: 'contacts', dependencies: ['db'] })
