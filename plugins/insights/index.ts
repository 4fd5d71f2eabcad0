import fp from 'fastify-plugin'
import routes from './routes.js'
import { createInsights, type InsightService } from './service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** insights over a session's statuses, expired and live (issue 32); summaries are written by the statuses' expiry */
    insights: InsightService
  }
}

export default fp(async (app) => {
  app.decorate('insights', createInsights({ stores: app.stores }))
  await app.register(routes, { prefix: '/api' })
}, { name: 'insights', dependencies: ['db', 'auth'] })
