import fp from 'fastify-plugin'
import routes from './routes.js'
import telemetry from './telemetry.js'

/**
 * The metrics concern: what feeds the gauges and counters from the service's events (telemetry.ts) and
 * GET /metrics. The registry (registry.ts) is a plugin of its own, registered early: the plugins that
 * count (the viewer ingest, the statuses) depend on it.
 */
export default fp(async (app) => {
  await app.register(telemetry)
  await app.register(routes)
}, { name: 'metrics-export', dependencies: ['config', 'metrics', 'auth', 'rate-limit'] })
