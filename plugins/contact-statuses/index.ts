import fp from 'fastify-plugin'
import { createContactStatusService, type ContactStatusService } from './service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** contacts' statuses once committed (service.ts): read, viewed, liked and replied to through the platform */
    contactStatuses: ContactStatusService
  }
}

// Contacts' statuses once committed: the intake that commits them as they arrive is plugins/contact-status-intake
// (the platform depends on it, and this service on the platform), their routes plugins/contact-statuses-api.
export default fp(async (app) => {
  const sessionExists = async (sessionId: string): Promise<boolean> => await app.stores.sessions.find(sessionId) !== undefined
  app.decorate('contactStatuses', createContactStatusService({
    contactStatuses: app.stores.contactStatuses,
    answers: app.stores.contactStatusAnswers,
    sessionExists,
    log: app.log.child({ plugin: 'contact-statuses' }),
    platform: app.platform,
    statusTtlMs: app.config.statusTtlMs,
    anyMediaHost: app.config.allowPrivateUrls
  }))
}, { name: 'contact-statuses', dependencies: ['config', 'db', 'platform'] })
