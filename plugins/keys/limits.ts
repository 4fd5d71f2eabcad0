import { createRequire } from 'node:module'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/**
 * The 429 of every request limit, with Retry-After (the error handler sets an error's `headers` on the answer):
 * this file's counts and @fastify/rate-limit's for /metrics (plugins/rate-limit/index.ts, which imports it).
 */
export function tooMany (ttl: number): Error {
  const seconds = Math.max(1, Math.ceil(ttl / 1000))
  return Object.assign(new Error(`Too many requests, retry in ${seconds} seconds`), { statusCode: 429, headers: { 'retry-after': String(seconds) } })
}

/** What @fastify/rate-limit's in-memory store answers: the requests counted in the key's window, and the window's time left. */
export interface Count { current: number, ttl: number }
export interface Store { incr: (key: string, cb: (err: Error | null, res: Count) => void, timeWindow: number, max: number) => void }
/**
 * @fastify/rate-limit's own store (a fixed window per key, the keys in an LRU of 5,000), which answers its
 * callback at once: the per-request counts below use it directly, synchronously, where the plugin's route
 * hook awaits the key, the allow-list and the store (four promises and a hook promise per request).
 */
const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore') as new (continueExceeding: boolean, exponentialBackoff: boolean) => Store

/**
 * A counter over one store: the key's count after this request, synchronously. It fails closed: the answer is
 * cleared before each `incr`, and a store that did not answer at once, or answered with an error, counts as
 * over the limit (one more than `max`, for a whole window), never as an earlier request's lower count.
 */
export function counter (max: number, windowMs: number, store: Store = new LocalStore(false, false)): (key: string) => Count {
  const over: Count = { current: max + 1, ttl: windowMs }
  const answer: { count: Count | null } = { count: null }
  const take = (err: Error | null, res: Count): void => { answer.count = err === null ? res : null }
  const read = (): Count => answer.count ?? over
  return (key) => {
    answer.count = null
    store.incr(key, take, windowMs, max)
    return read()
  }
}

/**
 * The API's request limits, RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_MS, counted with @fastify/rate-limit's own
 * store; answers the per-key count, for the key check (index.ts) to run once it knows the key.
 */
export function limitRequests (app: FastifyInstance): (req: FastifyRequest) => void {
  const { max, windowMs } = app.config.rateLimit
  // Per client address: req.ip, which is the X-Forwarded-For client with TRUST_PROXY set. Every route
  // under /api and requests that match no route (the 404 handler) count; the docs and the dashboard's
  // static files are not API calls (socket.io never reaches Fastify's routes). Decided by the route the
  // router matched, after percent-decoding (`/%61pi/stats` is /api/stats), never by the raw URL. A request
  // another node of the cluster passed on was counted there already; only with a valid signature (the
  // cluster plugin's check).
  const perAddress = counter(max, windowMs)
  app.addHook('onRequest', (req, reply, done) => {
    if (isOutsideApi(req.routeOptions.url) || app.cluster.validForward(req)) { done(); return }
    const { current, ttl } = perAddress(req.ip)
    const reset = Math.ceil(ttl / 1000)
    if (current <= max) {
      setHeaders(reply, max, max - current, reset)
      done()
      return
    }
    setHeaders(reply, max, 0, reset)
    void reply.header('retry-after', reset)
    done(tooMany(ttl))
  })

  // Per scoped key as well: one key spread over many addresses gets the budget of one address. The admin
  // key is the operator's own (every integration of a single-tenant install shares it): per address only.
  // It runs after the key check, where a forwarded request has already been accepted (its nonce spent, so
  // validForward would now say replayed): a forwarded request is not counted again.
  const perKey = counter(max, windowMs)
  return (req: FastifyRequest) => {
    const id = req.principal?.id
    if (id === null || id === undefined || app.cluster.isForwarded(req)) return
    const { current, ttl } = perKey(`key:${id}`)
    if (current > max) throw tooMany(ttl)
  }
}

function setHeaders (reply: FastifyReply, limit: number, remaining: number, reset: number): void {
  void reply.header('x-ratelimit-limit', limit)
  void reply.header('x-ratelimit-remaining', remaining)
  void reply.header('x-ratelimit-reset', reset)
}

export function isOutsideApi (route: string | undefined): boolean {
  return route !== undefined && route !== '/api' && !route.startsWith('/api/') && route !== '*' && route !== '/*'
}
