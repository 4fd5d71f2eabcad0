import fp from 'fastify-plugin'
import answerRoutes from './answer-routes.js'
import routes from './routes.js'

/**
 * The routes of contacts' statuses (plugins/contact-statuses), a plugin of their own: they use the cluster's
 * owner check (the cluster depends on the platform too). They join the service once the owner check is a route
 * policy that does not need the cluster first.
 */
export default fp(async (app) => {
  await app.register(routes, { prefix: '/api' })
  await app.register(answerRoutes, { prefix: '/api' })
}, { name: 'contact-statuses-api', dependencies: ['contact-statuses', 'cluster', 'auth'] })
