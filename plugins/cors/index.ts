import fp from 'fastify-plugin'
import cors from '@fastify/cors'

/**
 * Cross-origin access for browser apps on other origins, only when CORS_ORIGIN is set (unset: no CORS
 * headers at all, so browsers keep other sites out). The key travels in a header, never a cookie: no credentials.
 */
export default fp(async (app) => {
  const origin = app.config.corsOrigin
  if (origin === null) return
  await app.register(cors, {
    origin,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: ['x-request-id', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'],
    credentials: false,
    maxAge: 600
  })
}, { name: 'cors', dependencies: ['config'] })
