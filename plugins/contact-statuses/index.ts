import fp from 'fastify-plugin'
import answerRoutes from './answer-routes.js'
import routes from './routes.js'
import { createContactStatusService, type ContactStatusService } from './service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** contacts' statuses (service.ts): committed through `sink` by the platform, read by the routes */
    contactStatuses: ContactStatusService
  }
}

// The platform depends on this plugin: it is created with its sink.
export default fp(async (app) => {
  const sessionExists = async (sessionId: string): Promise<boolean> => await app.stores.sessions.find(sessionId) !== undefined
  const service = createContactStatusService({
    contactStatuses: app.stores.contactStatuses,
    answers: app.stores.contactStatusAnswers,
    sessionExists,
    events: app.domainEvents,
    log: app.log.child({ plugin: 'contact-statuses' }),
    platform: () => app.platform,
    statusTtlMs: app.config.statusTtlMs,
    anyMediaHost: app.config.allowPrivateUrls
  })
  app.decorate('contactStatuses', service)
  app.addHook('onClose', async () => { service.stop() })
}, { name: 'contact-statuses', dependencies: ['config', 'db', 'domain-events'] })

/**
 * The routes, a plugin of their own: they use the cluster's owner check, and the cluster depends on the
 * platform, which depends on the plugin above (it keeps its sink). They join it once the owner check is a
 * route policy that does not need the cluster registered first.
 */
export const contactStatusesApi = fp(async (app) => {
  await app.register(routes, { prefix: '/api' })
  await app.register(answerRoutes, { prefix: '/api' })
}, { name: 'contact-statuses-api', dependencies: ['contact-statuses', 'cluster', 'auth'] })
