import fp from 'fastify-plugin'
import health from './health.js'
import routes from './routes.js'

/** The system concern: the health checks (health.ts) and /api/health, /api/stats, /api/storage, /api/cluster. */
export default fp(async (app) => {
  await app.register(health)
  await app.register(routes, { prefix: '/api' })
}, { name: 'system', dependencies: ['config', 'db', 'platform', 'cluster', 'sessions', 'media-store', 'session-supervisor'] })
