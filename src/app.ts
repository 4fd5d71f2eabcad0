import Fastify, { type FastifyError, type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import type { Config } from './config.js'
import type { Platform } from './platform/platform.js'
import { EXPOSED_5XX_CODES, fromPlatform, RouteNotFound } from './errors.js'
import { ErrorEnvelopeSchema } from '../schemas/envelope.js'
import configPlugin from '../plugins/core/config.js'
import dbPlugin from '../plugins/core/db.js'
import mediaStorePlugin from '../plugins/uploads/media-store.js'
import authPlugin from '../plugins/keys/auth.js'
import domainEventsPlugin from '../plugins/broadcaster/domain-events.js'
import viewerIngestPlugin from '../plugins/statuses/viewer-ingest.js'
import interactionIngestPlugin from '../plugins/statuses/interaction-ingest.js'
import contactsPlugin from '../plugins/contacts/index.js'
import contactRoutes from '../plugins/contacts/routes.js'
import contactStatusesPlugin from '../plugins/contact-statuses/index.js'
import contactStatusRoutes from '../plugins/contact-statuses/routes.js'
import platformPlugin from '../plugins/platform/index.js'
import broadcasterPlugin from '../plugins/broadcaster/index.js'
import webhooksPlugin from '../plugins/webhooks/index.js'
import clusterPlugin from '../plugins/cluster/index.js'
import sessionsPlugin from '../plugins/sessions/index.js'
import statusesPlugin from '../plugins/statuses/index.js'
import audiencesPlugin from '../plugins/audiences/index.js'
import audienceRoutes from '../plugins/audiences/routes.js'
import pacingPlugin from '../plugins/pacing/index.js'
import schedulesPlugin from '../plugins/schedules/index.js'
import scheduleRoutes from '../plugins/schedules/routes.js'
import reportRoutes from '../plugins/statuses/report-routes.js'
import swaggerPlugin from '../plugins/external/swagger.js'
import rateLimitPlugin from '../plugins/external/rate-limit.js'
import socketIoPlugin from '../plugins/external/socket-io.js'
import staticPlugin from '../plugins/external/static.js'
import metricsPlugin from '../plugins/external/metrics.js'
import corsPlugin from '../plugins/external/cors.js'
import compressPlugin from '../plugins/external/compress.js'
import requestIdPlugin, { genReqId } from '../plugins/core/request-id.js'
import { QuietRequestLog } from '../plugins/core/request-log.js'
import healthPlugin from '../plugins/system/health.js'
import telemetryPlugin from '../plugins/metrics/telemetry.js'
import metricsRoutes from '../plugins/metrics/routes.js'
import helmetPlugin from '../plugins/external/helmet.js'
import remoteMediaPlugin from '../plugins/uploads/remote-media.js'
import { clientErrorHandler, frameworkErrors } from '../plugins/core/framework-errors.js'
import { requestSerializer } from './logging/redact.js'
import { cachedSerializer, deferredCompiles, strictBodyValidator } from '../plugins/core/validation.js'
import systemRoutes from '../plugins/system/routes.js'
import sessionRoutes from '../plugins/sessions/routes.js'
import uploadRoutes from '../plugins/uploads/routes.js'
import statusRoutes from '../plugins/statuses/routes.js'
import webhookRoutes from '../plugins/webhooks/routes.js'
import keyRoutes from '../plugins/keys/routes.js'
import eventRoutes from '../plugins/events/routes.js'

export interface AppOptions {
  config: Config
  /** a stand-in for the platform (a test's fake): the app then never loads Baileys nor connects a session */
  platform?: Platform
}

/** Route plugins mounted under /api, each encapsulated; the key hook covers all of them. */
const apiRoutes: FastifyPluginAsync = async (api) => {
  // preParsing, not onRequest: the per-route rate-limit hook (onRequest) must count unauthenticated
  // requests too, and no body is parsed before the key is checked. The key (admin or scoped, keys/auth.ts)
  // is counted too, then it must see the route's session and hold its scope (keys/scopes.ts). A request
  // another node of the cluster passed on carries that node's signed word for who the caller is instead of
  // the caller's key (plugins/cluster/signature.ts); the owner checks the session and scope again.
  // Synchronous when the key is (the admin key, or a scoped key on SQLite): no promise per request.
  api.addHook('preParsing', (req, reply, payload, done) => {
    const admit = (): void => {
      api.authorize(req)
      api.limitPerKey(req)
    }
    let pending: void | Promise<void>
    try {
      pending = api.cluster.isForwarded(req) ? api.authenticateGrant(req, api.cluster.acceptForward(req)) : api.authenticate(req, reply)
      if (pending === undefined) admit()
    } catch (err) {
      done(err as Error)
      return
    }
    if (pending === undefined) { done(null, payload); return }
    pending.then(admit).then(() => { done(null, payload) }, (err: Error) => { done(err) })
  })
  await api.register(systemRoutes)
  await api.register(sessionRoutes)
  await api.register(uploadRoutes)
  await api.register(statusRoutes)
  await api.register(webhookRoutes)
  await api.register(keyRoutes)
  await api.register(eventRoutes)
  await api.register(scheduleRoutes)
  await api.register(reportRoutes)
  await api.register(contactRoutes)
  await api.register(contactStatusRoutes)
  await api.register(audienceRoutes)
}

/** The whole service as one plugin. */
export const serviceApp: FastifyPluginAsync<AppOptions> = async (app, opts) => {
  app.addSchema(ErrorEnvelopeSchema)

  await app.register(configPlugin, { config: opts.config })
  await app.register(requestIdPlugin)
  await app.register(metricsPlugin)
  await app.register(corsPlugin)
  await app.register(compressPlugin)
  await app.register(helmetPlugin)
  await app.register(rateLimitPlugin)
  await app.register(swaggerPlugin)
  await app.register(dbPlugin)
  await app.register(mediaStorePlugin)
  await app.register(remoteMediaPlugin)
  await app.register(authPlugin)
  await app.register(socketIoPlugin)
  await app.register(domainEventsPlugin)
  // before the platform: it closes after it, so events the platform emits while closing still reach the outbox
  await app.register(webhooksPlugin)
  await app.register(viewerIngestPlugin)
  await app.register(interactionIngestPlugin)
  await app.register(contactsPlugin)
  await app.register(contactStatusesPlugin)
  await app.register(platformPlugin, opts.platform !== undefined ? { standIn: opts.platform } : {})
  await app.register(broadcasterPlugin)
  await app.register(clusterPlugin)
  await app.register(sessionsPlugin)
  await app.register(pacingPlugin)
  await app.register(audiencesPlugin)
  await app.register(statusesPlugin)
  await app.register(schedulesPlugin)
  await app.register(healthPlugin)
  await app.register(telemetryPlugin)
  await app.register(staticPlugin)

  app.setErrorHandler((error: FastifyError, req, reply) => {
    const err = fromPlatform(error)
    const status = err.validation !== undefined ? 400 : statusOf(err)
    let message = err.message
    if (err.validation !== undefined) {
      message = validationMessage(err)
    } else if (status >= 500 && (err.code === undefined || !EXPOSED_5XX_CODES.has(err.code))) {
      req.log.error({ err }, 'unexpected error')
      message = 'Internal server error'
    } else if (status >= 500) {
      req.log.warn({ err }, err.message)
    }
    // an error may name headers of its own (pacing's Retry-After)
    const headers = (err as { headers?: Record<string, string> }).headers
    if (headers !== undefined && status < 500) void reply.headers(headers)
    void reply.code(status).send({ success: false, error: message })
  })

  // counted by the rate limit's hook like every /api route (plugins/external/rate-limit.ts)
  app.setNotFoundHandler(() => {
    throw new RouteNotFound()
  })

  // after the handlers: encapsulated children take the error handler in force when they are created
  await app.register(apiRoutes, { prefix: '/api' })
  await app.register(metricsRoutes)
}

function statusOf (err: FastifyError): number {
  const code = err.statusCode
  return typeof code === 'number' && code >= 400 && code <= 599 ? code : 500
}

function validationMessage (err: FastifyError): string {
  const first = err.validation?.[0]
  if (first === undefined) return err.message
  const context = err.validationContext ?? 'body'
  const field = first.instancePath.replace(/^\//, '').replaceAll('/', '.')
  const where = field === '' ? context : `${context}.${field}`
  if (first.keyword === 'required') return `${where}.${String(first.params.missingProperty)} is required`
  if (first.keyword === 'additionalProperties') return `${where}.${String(first.params.additionalProperty)} is not an allowed field`
  if (first.keyword === 'pattern' && /phoneNumber|targetNumbers/.test(field)) return `${where} must be 10 to 15 digits including country code, no plus sign`
  if (first.keyword === 'pattern' && field === 'sessionId') return `${where} may contain only letters, digits, underscore and hyphen (at most 64 characters)`
  if (first.keyword === 'enum') return `${where} must be one of: ${(first.params.allowedValues as unknown[]).join(', ')}`
  return `${where} ${first.message ?? 'is invalid'}`
}

/** A hop count as Fastify applies it (proxy-addr: the n closest addresses are proxies). */
function hops (n: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < n
}

/** The service; `options.platform` replaces the platform (tests build the whole app around a fake one). */
export async function buildApp (config: Config, fastifyOptions: FastifyServerOptions = {}, options: Omit<AppOptions, 'config'> = {}): Promise<FastifyInstance> {
  // route schemas compile after the server listens (validation.ts); with the deferred-compiles speed trick
  // off (SPEED_TRICKS_OFF, src/speed-tricks.ts) Fastify compiles them all while it gets ready
  const compiles = config.speedTricksOff.has('deferred-compiles') ? undefined : deferredCompiles()
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers["x-api-key"]'],
      // query-string keys (?apiKey=…) are redacted from logged URLs
      serializers: { req: requestSerializer }
    },
    // x-request-id: the caller's when sane, else generated; the same id in the logs and on the answer
    genReqId,
    requestIdHeader: false,
    // one line per request in and out only at debug (request-log.ts)
    logController: new QuietRequestLog(),
    bodyLimit: 2 * 1024 * 1024,
    // TRUST_PROXY: req.ip (rate limit, logs) is the client X-Forwarded-For names, as Fastify's trustProxy defines it
    trustProxy: typeof config.trustProxy === 'number' ? hops(config.trustProxy) : config.trustProxy,
    // reject unknown fields instead of silently dropping them (a typo must not change what is sent)
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false } },
    // query strings and params are converted to their schema's types, JSON bodies never (see validation.ts)
    schemaController: { compilersFactory: { buildValidator: strictBodyValidator(compiles), buildSerializer: cachedSerializer(compiles) } },
    // the router's and Node's HTTP parser's own errors answer in the envelope too
    frameworkErrors,
    clientErrorHandler,
    ...fastifyOptions
  }).withTypeProvider<TypeBoxTypeProvider>()
  // the schemas no request has needed yet compile 10 s after the server listens, once the stored sessions
  // have reconnected (their compiles took 5 % of the service's CPU while 100 sessions opened); until then,
  // and in an app that only answers inject(), a schema compiles on its route's first use
  if (compiles !== undefined) {
    app.addHook('onListen', async () => {
      setTimeout(() => { compiles.warm((err) => { app.log.error({ err }, 'a route schema does not compile') }) }, 10_000).unref()
    })
    app.addHook('onClose', async () => { compiles.stop() })
  }
  await app.register(fp(serviceApp), { ...options, config })
  return app
}
