import fp from 'fastify-plugin'
import answerRoutes from './answer-routes.js'
import { createContactStatusIntake, type ContactStatusIntake } from './intake.js'
import routes from './routes.js'
import { createContactStatusService, type ContactStatusService } from './service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** contacts' statuses as they arrive (intake.ts): the sink the platform commits each one through */
    contactStatusIntake: ContactStatusIntake
    /** contacts' statuses once committed (service.ts): read, viewed, liked and replied to through the platform */
    contactStatuses: ContactStatusService
  }
}

// Two plugins, so the graph has no cycle: the platform depends on the intake (it is created with its sink), and
// the service depends on the platform (it sends receipts, likes and replies through it).
export const contactStatusIntake = fp(async (app) => {
  const intake = createContactStatusIntake({ events: app.domainEvents })
  app.decorate('contactStatusIntake', intake)
  // the platform closes first (it depends on this plugin); a status after that is refused, never acked
  app.addHook('onClose', async () => { intake.stop() })
}, { name: 'contact-status-intake', dependencies: ['domain-events'] })

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

/**
 * The routes, a plugin of their own: they use the cluster's owner check (the cluster depends on the platform
 * too). They join the service once the owner check is a route policy that does not need the cluster first.
 */
export const contactStatusesApi = fp(async (app) => {
  await app.register(routes, { prefix: '/api' })
  await app.register(answerRoutes, { prefix: '/api' })
}, { name: 'contact-statuses-api', dependencies: ['contact-statuses', 'cluster', 'auth'] })
