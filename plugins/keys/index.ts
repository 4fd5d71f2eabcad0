import fp from 'fastify-plugin'
import { limitRequests } from './limits.js'
import routes from './routes.js'

/**
 * The keys concern: who may call the API, and how often. The key store and its checks are the `auth`
 * plugin (plugins/auth/, which socket.io and the webhooks use too); this plugin puts every /api route behind
 * them, counts requests (limits.ts) and serves /api/keys.
 */
export default fp(async (app) => {
  const limitPerKey = limitRequests(app)
  // preParsing, not onRequest: the per-address limit (onRequest, limits.ts) must count unauthenticated
  // requests too, and no body is parsed before the key is checked. The key (admin or scoped, plugins/auth/) is
  // counted too, then it must see the route's session and hold the scope the route declares (`config.scope`,
  // route-scope.ts; a route with none is public, and the start refuses one that declares neither). A request another
  // node of the cluster passed on carries that node's signed word for who the caller is instead of the
  // caller's key (plugins/cluster/signature.ts); the owner checks the session and scope again.
  // A hook of the root: it covers every route with a scope, whichever plugin registers it, before this one or after.
  app.addHook('preParsing', async (req, reply, payload) => {
    if (req.routeOptions.config?.scope === undefined) return payload
    await (app.cluster.isForwarded(req) ? app.authenticateGrant(req, app.cluster.acceptForward(req)) : app.authenticate(req, reply))
    app.authorize(req)
    limitPerKey(req)
    return payload
  })
  await app.register(routes, { prefix: '/api' })
}, { name: 'keys', dependencies: ['config', 'auth', 'cluster'] })
