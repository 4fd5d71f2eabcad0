import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'

export default fp(async (app) => {
  await app.register(rateLimit, {
    global: true,
    max: app.config.rateLimit.max,
    timeWindow: app.config.rateLimit.windowMs,
    // socket.io polling, the docs and the dashboard's static files are not API calls
    allowList: (req) => !req.url.startsWith('/api'),
    errorResponseBuilder: (_req, ctx) => {
      const seconds = Math.max(1, Math.ceil(ctx.ttl / 1000))
      const err = new Error(`Too many requests, retry in ${seconds} seconds`) as Error & { statusCode: number }
      err.statusCode = 429
      return err
    }
  })
}, { name: 'rate-limit', dependencies: ['config'] })
