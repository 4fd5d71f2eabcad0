import type { IncomingHttpHeaders } from 'node:http'
import fp from 'fastify-plugin'
import bearerAuth from '@fastify/bearer-auth'
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { Forbidden, SessionNotFound, Unauthorized } from '../../src/errors.js'
import { ADMIN, canSee, createKeyStore, hasScope, type KeyStore, type Principal } from '../keys/store.js'
import { undeclaredPolicy } from '../keys/route-scope.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** the admin key and the scoped keys */
    keys: KeyStore
    /** whether the value is a valid key (admin or scoped), in constant time */
    checkApiKey: (candidate: string) => Promise<boolean>
    /** sets `req.principal` from `x-api-key` or `Authorization: Bearer`, or throws Unauthorized */
    authenticate: (req: FastifyRequest, reply: FastifyReply) => Promise<void>
    /**
     * sets `req.principal` from a grant another node of the cluster signed (`admin` or `key:<id>`, see
     * plugins/cluster/signature.ts), or throws Unauthorized when that key is gone
     */
    authenticateGrant: (req: FastifyRequest, grant: string) => Promise<void>
    /** after authenticate: 404 for a session the key may not see, 403 without the scope the route declares */
    authorize: (req: FastifyRequest) => void
    /** throws unless the request carries the admin key (for /metrics) */
    requireAdmin: (req: FastifyRequest, reply: FastifyReply) => Promise<void>
  }
  interface FastifyRequest {
    /** who the request speaks for; set by authenticate (every /api route) */
    principal: Principal | null
    /** the sessions the key may see; null: every session (the admin key, a `"*"` key). Set with `principal` */
    keySessionIds: readonly string[] | null
  }
}

export default fp(async (app) => {
  const keys = createKeyStore({ store: app.stores.keys, adminKey: app.config.apiKey, log: app.log.child({ plugin: 'keys' }) })
  await keys.start()
  app.addHook('onClose', async () => { keys.stop() })
  app.decorate('keys', keys)
  app.decorateRequest('principal', null)
  app.decorateRequest('keySessionIds', null)

  const setPrincipal = (req: FastifyRequest, p: Principal | null): boolean => {
    req.principal = p
    req.keySessionIds = p === null || p.sessions === '*' ? null : [...p.sessions]
    return p !== null
  }
  const resolveInto = async (key: string, req: FastifyRequest): Promise<boolean> => setPrincipal(req, await keys.resolve(key))

  // Authorization: Bearer through @fastify/bearer-auth, its look-up being the key store's; `x-api-key`
  // (the spec's other form) through the same look-up
  await app.register(bearerAuth, { keys: [], addHook: false, specCompliance: 'rfc6749', verifyErrorLogLevel: 'debug', auth: resolveInto })
  const verifyBearer = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => await new Promise((resolve, reject) => {
    app.verifyBearerAuth?.(req, reply, (err?: Error) => { if (err === undefined || err === null) resolve(); else reject(new Unauthorized()) })
  })

  const authenticate = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const header = req.headers['x-api-key']
    // bearer-auth answers 401 on the reply it was given; the error handler sets the code again
    if (typeof header === 'string' && header !== '') {
      if (!await resolveInto(header, req)) throw new Unauthorized()
      return
    }
    await verifyBearer(req, reply)
    if (req.principal === null) throw new Unauthorized()
  }

  app.decorate('authenticateGrant', async (req: FastifyRequest, grant: string) => {
    const found = grant === 'admin' ? ADMIN : grant.startsWith('key:') ? await keys.principalById(grant.slice(4)) : null
    if (!setPrincipal(req, found)) throw new Unauthorized()
  })
  app.decorate('checkApiKey', async (candidate: string) => await keys.resolve(candidate) !== null)
  app.decorate('authenticate', authenticate)
  app.decorate('authorize', (req: FastifyRequest) => {
    const p = req.principal
    if (p === null) throw new Unauthorized()
    if (p.admin) return
    const sessionId = (req.params as { sessionId?: unknown } | undefined)?.sessionId
    if (typeof sessionId === 'string' && !canSee(p, sessionId)) throw new SessionNotFound()
    // never undefined (the start refuses such a route); the admin key if it were
    const scope = req.routeOptions.config.scope ?? 'admin'
    if (scope === 'any') return
    if (scope === 'admin') throw new Forbidden('This route needs the admin key')
    if (!hasScope(p, scope)) throw new Forbidden(`This key lacks the ${scope} scope`)
  })
  app.decorate('requireAdmin', async (req: FastifyRequest, reply: FastifyReply) => {
    await authenticate(req, reply)
    if (req.principal?.admin !== true) throw new Forbidden('This route needs the admin key')
  })

  // Every route declares the key it needs (`config.scope`, route-scope.ts) or that it needs none
  // (`config.public`); one that declares neither stops the start (fail closed). Checked once every route is
  // in: a plugin may mark the routes of a third-party plugin public in an onRoute hook that runs after this one.
  // A route with a scope gets the key check of the keys plugin (index.ts), wherever it is registered.
  let routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => { routes.push(route) })
  app.addHook('onReady', async () => {
    const wrong = routes.map(undeclaredPolicy).filter((why) => why !== null)
    routes = []
    if (wrong.length > 0) throw new Error(`Routes without a key policy: ${wrong.join('; ')}`)
  })
}, { name: 'auth', dependencies: ['config', 'db'] })

/** The API key a request's (or socket.io handshake's) headers carry: `x-api-key`, else `Authorization: Bearer`. */
export function apiKeyFrom (headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key']
  if (typeof header === 'string' && header !== '') return header
  const auth = headers.authorization
  const m = auth === undefined ? null : /^Bearer\s+(.+)$/i.exec(auth)
  return m === null ? undefined : m[1].trim()
}
