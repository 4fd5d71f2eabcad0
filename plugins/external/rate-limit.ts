import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'

/** The 429 of every request limit, with Retry-After (the error handler sets an error's `headers` on the answer). */
export function tooMany (ttl: number): Error {
  const seconds = Math.max(1, Math.ceil(ttl / 1000))
  return Object.assign(new Error(`Too many requests, retry in ${seconds} seconds`), { statusCode: 429, headers: { 'retry-after': String(seconds) } })
}

/**
 * @fastify/rate-limit for routes with a count of their own (`config.rateLimit`: /metrics); every /api route
 * and the 404 handler are counted by the keys plugin (plugins/keys/limits.ts), with the same settings.
 */
export default fp(async (app) => {
  const { max, windowMs } = app.config.rateLimit
  await app.register(rateLimit, { global: false, max, timeWindow: windowMs, errorResponseBuilder: (_req, ctx) => tooMany(ctx.ttl) })
}, { name: 'rate-limit', dependencies: ['config'] })
