import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'

export default fp(async (app) => {
  await app.register(rateLimit, {
    global: true,
    max: app.config.rateLimit.max,
    timeWindow: app.config.rateLimit.windowMs,
    // the docs and the dashboard's static files are not API calls (socket.io never reaches Fastify's routes).
    // Decided by the route the router matched, after percent-decoding (`/%61pi/stats` is /api/stats), never
    // by the raw URL; requests that match no route (the 404 handler) always count.
    // A request another node of the cluster passed on was counted there already; only with a valid
    // signature (the cluster plugin's check, decorated after this plugin registers, present per request).
    allowList: (req) => isOutsideApi(req.routeOptions.url) || app.cluster.validForward(req),
    errorResponseBuilder: (_req, ctx) => {
      const seconds = Math.max(1, Math.ceil(ctx.ttl / 1000))
      const err = new Error(`Too many requests, retry in ${seconds} seconds`) as Error & { statusCode: number }
      err.statusCode = 429
      return err
    }
  })
}, { name: 'rate-limit', dependencies: ['config'] })

export function isOutsideApi (route: string | undefined): boolean {
  return route !== undefined && route !== '/api' && !route.startsWith('/api/') && route !== '*' && route !== '/*'
}
