import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import { tooMany } from '../keys/limits.js'

/**
 * @fastify/rate-limit for routes with a count of their own (`config.rateLimit`: /metrics); every /api route
 * and the 404 handler are counted by the keys plugin (plugins/keys/limits.ts), with the same settings.
 */
export default fp(async (app) => {
  const { max, windowMs } = app.config.rateLimit
  await app.register(rateLimit, { global: false, max, timeWindow: windowMs, errorResponseBuilder: (_req, ctx) => tooMany(ctx.ttl) })
}, { name: 'rate-limit', dependencies: ['config'] })
