import fp from 'fastify-plugin'
import routes from './routes.js'

/** The system concern: /api/health, /api/stats, /api/storage, /api/cluster; the health checks are a plugin of their own (health.ts). */
export default fp(async (app) => {
  await app.register(routes, { prefix: '/api' })
}, { name: 'system', dependencies: ['config', 'db', 'platform', 'cluster', 'sessions', 'media-store', 'session-supervisor', 'health'] })
