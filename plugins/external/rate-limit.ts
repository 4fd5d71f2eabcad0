import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyInstance {
    /** the second count, per key (after authenticate): throws 429 when the key is over the limit */
    limitPerKey: (req: FastifyRequest) => Promise<void>
  }
}

export default fp(async (app) => {
  // A request another node of the cluster passed on was counted there already; only with a valid
  // signature (the cluster plugin's check, decorated after this plugin registers, present per request).
  const forwarded = (req: FastifyRequest): boolean => app.cluster.validForward(req)
  const tooMany = (ttl: number): Error => {
    const seconds = Math.max(1, Math.ceil(ttl / 1000))
    const err = new Error(`Too many requests, retry in ${seconds} seconds`) as Error & { statusCode: number }
    err.statusCode = 429
    return err
  }
  await app.register(rateLimit, {
    global: true,
    max: app.config.rateLimit.max,
    timeWindow: app.config.rateLimit.windowMs,
    // per client address: req.ip, which is the X-Forwarded-For client with TRUST_PROXY set
    // the docs and the dashboard's static files are not API calls (socket.io never reaches Fastify's routes).
    // Decided by the route the router matched, after percent-decoding (`/%61pi/stats` is /api/stats), never
    // by the raw URL; requests that match no route (the 404 handler) always count.
    allowList: async (req) => isOutsideApi(req.routeOptions.url) || forwarded(req),
    errorResponseBuilder: (_req, ctx) => tooMany(ctx.ttl)
  })

  // Per scoped key as well: one key spread over many addresses gets the budget of one address. The admin
  // key is the operator's own (every integration of a single-tenant install shares it): per address only.
  const perKey = app.createRateLimit({
    keyGenerator: (req) => `key:${req.principal?.id ?? 'admin'}`,
    // limitPerKey runs after the key check, where a forwarded request has already been accepted (its nonce
    // spent, so validForward would now say replayed)
    allowList: async (req) => req.principal?.id === null || req.principal?.id === undefined || app.cluster.isForwarded(req)
  })
  app.decorate('limitPerKey', async (req: FastifyRequest) => {
    const result = await perKey(req)
    if (!result.isAllowed && result.isExceeded) throw tooMany(result.ttl)
  })
}, { name: 'rate-limit', dependencies: ['config'] })

export function isOutsideApi (route: string | undefined): boolean {
  return route !== undefined && route !== '/api' && !route.startsWith('/api/') && route !== '*' && route !== '/*'
}
