import Fastify, { type FastifyError, type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import type { Config } from './config.js'
import type { Platform } from './platform/platform.js'
import { EXPOSED_5XX_CODES, fromPlatform, RouteNotFound } from './errors.js'
import { ErrorEnvelopeSchema } from '../schemas/envelope.js'
import { requestSerializer } from './logging/redact.js'
import configPlugin from '../plugins/config/index.js'
import requestIdPlugin, { genReqId } from '../plugins/request-id/index.js'
import { QuietRequestLog } from '../plugins/core/request-log.js'
import { clientErrorHandler, frameworkErrors } from '../plugins/core/framework-errors.js'
import { cachedSerializer, deferredCompiles, strictBodyValidator } from '../plugins/core/validation.js'
import dbPlugin from '../plugins/db/index.js'
import compressPlugin from '../plugins/compress/index.js'
import corsPlugin from '../plugins/cors/index.js'
import helmetPlugin from '../plugins/helmet/index.js'
import rateLimitPlugin from '../plugins/rate-limit/index.js'
import socketIoPlugin from '../plugins/socket-io/index.js'
import staticPlugin from '../plugins/static/index.js'
import swaggerPlugin from '../plugins/swagger/index.js'
import metricsRegistry from '../plugins/metrics/index.js'
import domainEvents from '../plugins/domain-events/index.js'
import uploads from '../plugins/uploads/index.js'
import mediaStore from '../plugins/media-store/index.js'
import remoteMedia from '../plugins/remote-media/index.js'
import auth from '../plugins/auth/index.js'
import viewerIngest from '../plugins/viewer-ingest/index.js'
import interactionIngest from '../plugins/interaction-ingest/index.js'
import contacts from '../plugins/contacts/index.js'
import contactStatusIntake from '../plugins/contact-status-intake/index.js'
import contactStatuses from '../plugins/contact-statuses/index.js'
import contactStatusesApi from '../plugins/contact-statuses-api/index.js'
import platform from '../plugins/platform/index.js'
import cluster from '../plugins/cluster/index.js'
import keys from '../plugins/keys/index.js'
import webhooks from '../plugins/webhooks/index.js'
import broadcaster from '../plugins/broadcaster/index.js'
import sessions from '../plugins/sessions/index.js'
import pacing from '../plugins/pacing/index.js'
import audiences from '../plugins/audiences/index.js'
import sendStatus from '../plugins/send-status/index.js'
import statuses from '../plugins/statuses/index.js'
import insights from '../plugins/insights/index.js'
import sessionSupervisor from '../plugins/session-supervisor/index.js'
import schedules from '../plugins/schedules/index.js'
import events from '../plugins/events/index.js'
import system from '../plugins/system/index.js'
import health from '../plugins/health/index.js'
import metricsExport from '../plugins/metrics-export/index.js'
import telemetry from '../plugins/telemetry/index.js'
import { inDependencyOrder } from './plugin-order.js'

export interface AppOptions {
  config: Config
  /** a stand-in for the platform (a test's fake): the app then never loads Baileys nor connects a session */
  platform?: Platform
}

/** Third-party plugins, configured (plugins/cors/, plugins/helmet/ …, each its own folder); their routes keep Fastify's own error handler. */
export const EXTERNAL = [corsPlugin, compressPlugin, helmetPlugin, rateLimitPlugin, swaggerPlugin, socketIoPlugin, staticPlugin]

/**
 * The service's plugins: each concern (its index.ts, with its routes) and the plugins it shares with others.
 * A set: each declares the plugins it uses (`dependencies`) and they register in an order that puts those
 * first (src/plugin-order.ts), so adding one is adding it here; Fastify closes in the reverse order, each
 * plugin before the ones it uses.
 */
export const CONCERNS = new Set([
  audiences,
  auth,
  broadcaster,
  cluster,
  contacts,
  contactStatusIntake,
  contactStatuses,
  contactStatusesApi,
  dbPlugin,
  domainEvents,
  events,
  health,
  insights,
  interactionIngest,
  keys,
  mediaStore,
  metricsExport,
  metricsRegistry,
  pacing,
  platform,
  remoteMedia,
  schedules,
  sendStatus,
  sessions,
  sessionSupervisor,
  statuses,
  system,
  telemetry,
  uploads,
  viewerIngest,
  webhooks
])

/** what serviceApp registers before the concerns: the configuration, the request id and the EXTERNAL plugins */
export const BEFORE_CONCERNS = ['config', 'request-id', 'cors', 'compress', 'helmet', 'rate-limit', 'swagger', 'socket-io', 'static']

/** The whole service as one plugin. */
export const serviceApp: FastifyPluginAsync<AppOptions> = async (app, opts) => {
  app.addSchema(ErrorEnvelopeSchema)
  await app.register(configPlugin, { config: opts.config })
  await app.register(requestIdPlugin)
  for (const plugin of EXTERNAL) await app.register(plugin)

  // before the concerns: a route takes the error handler in force when it is created
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

  // counted by the per-address limit like every /api route (plugins/keys/limits.ts)
  app.setNotFoundHandler(() => {
    throw new RouteNotFound()
  })

  const platformOptions = opts.platform !== undefined ? { standIn: opts.platform } : {}
  for (const plugin of inDependencyOrder(CONCERNS, BEFORE_CONCERNS)) await app.register(plugin, plugin === platform ? platformOptions : {})
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
    // a path parameter of any length Node's parser lets through (its whole head is at most 16 KiB) reaches the
    // route's schema, which names it in a 400 like every other length limit; the router's default (100)
    // answered 414 before the schema ran, a code no route declared (issue 41)
    routerOptions: { maxParamLength: 16 * 1024 },
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
  // the schemas no request has needed yet compile once the stored sessions have reconnected (their compiles
  // took 5 % of the service's CPU while 100 sessions opened; a thousand take longer than the 10 s waited at
  // least), one per turn of the event loop; until then, and in an app that only answers inject(), a schema
  // compiles on its route's first use
  if (compiles !== undefined) {
    app.addHook('onListen', async () => {
      const starting = (): boolean => {
        const p = app.supervisor.progress()
        return p.waiting + p.opening > 0
      }
      const later = (): void => {
        if (starting()) { setTimeout(later, 1000).unref(); return }
        compiles.warm((err) => { app.log.error({ err }, 'a route schema does not compile') })
      }
      setTimeout(later, 10_000).unref()
    })
    app.addHook('onClose', async () => { compiles.stop() })
  }
  await app.register(fp(serviceApp), { ...options, config })
  return app
}
