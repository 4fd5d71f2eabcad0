import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import { apiKeyFrom } from '../keys/auth.js'
import { FORWARDED_HEADER } from '../cluster/forward.js'

export default fp(async (app) => {
  // the auth plugin's check, decorated after this plugin registers (called per request, by then present)
  const validKey = (key: string | undefined): boolean => key !== undefined && app.checkApiKey(key)
  await app.register(rateLimit, {
    global: true,
    max: app.config.rateLimit.max,
    timeWindow: app.config.rateLimit.windowMs,
    // the docs and the dashboard's static files are not API calls (socket.io never reaches Fastify's routes).
    // Decided by the route the router matched, after percent-decoding (`/%61pi/stats` is /api/stats), never
    // by the raw URL; requests that match no route (the 404 handler) always count.
    // A request another node of the cluster passed on was counted there already; only with the right key,
    // so the header cannot help anyone guess keys.
    allowList: (req) => isOutsideApi(req.routeOptions.url) || (typeof req.headers[FORWARDED_HEADER] === 'string' && validKey(apiKeyFrom(req.headers))),
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
