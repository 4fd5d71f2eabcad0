import fp from 'fastify-plugin'
import { createContactStatusIntake, type ContactStatusIntake } from './intake.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** contacts' statuses as they arrive (intake.ts): the sink the platform commits each one through */
    contactStatusIntake: ContactStatusIntake
  }
}

// A plugin apart from the service (plugins/contact-statuses), so the graph has no cycle: the platform depends on
// the intake (it is created with its sink), and the service depends on the platform (it sends receipts, likes
// and replies through it).
export default fp(async (app) => {
  const intake = createContactStatusIntake({ events: app.domainEvents })
  app.decorate('contactStatusIntake', intake)
  // the platform closes first (it depends on this plugin); a status after that is refused, never acked
  app.addHook('onClose', async () => { intake.stop() })
}, { name: 'contact-status-intake', dependencies: ['domain-events'] })
