import fp from 'fastify-plugin'
import routes from './routes.js'

/**
 * The metrics concern: GET /metrics. The registry (registry.ts) and what feeds its gauges and counters from
 * the service's events (telemetry.ts) are plugins of their own: the plugins that count (the viewer ingest,
 * the statuses) depend on the registry.
 */
export default fp(async (app) => {
  await app.register(routes)
}, { name: 'metrics-export', dependencies: ['config', 'metrics', 'auth', 'rate-limit'] })
