import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { EventSchemas } from '../../schemas/events.js'
import { WebhookBodySchema } from '../../schemas/webhook.js'
import { APP_VERSION } from '../../src/version.js'
import { CONTENT_SECURITY_POLICY, markPublic } from '../static/index.js'
import { scopeLine } from '../keys/route-scope.js'

export default fp(async (app) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Status Tracker API',
        version: APP_VERSION,
        description: 'Link messaging accounts by QR or pairing code, publish 24-hour statuses and see who viewed them. ' +
          'Every response is `{ success, data }` or `{ success: false, error }`. Real-time events are served by socket.io at `/socket.io/`; ' +
          'their payloads are the `Event*` schemas below, plus `eventId` on every event but QR and pairing codes (GET /api/events, docs/events-log.md). ' +
          'Every /api call needs a key: the admin key (API_KEY) or a scoped key ' +
          '(`/api/keys`) that sees only its sessions; each operation names the scope it needs (`x-scopes`).'
      },
      servers: [{ url: '/' }],
      tags: [
        { name: 'sessions', description: 'Linked accounts' },
        { name: 'statuses', description: 'Publishing statuses and reading viewers' },
        { name: 'uploads', description: 'Media for image and video statuses' },
        { name: 'system', description: 'Health, statistics and storage' },
        { name: 'contacts', description: 'What the linked phone shares: its saved contacts (app-state sync) and its status privacy' },
        { name: 'insights', description: 'What stays of statuses after their 24 hours: who views, how fast, when, and what works (docs/insights.md)' },
        { name: 'audiences', description: "Saved audiences (named lists of numbers) that send-status `audience` posts to, besides the phone's contacts and status privacy" },
        { name: 'schedules', description: 'Scheduled and repeating statuses, fired once each (also across a cluster)' },
        { name: 'webhooks', description: 'Signed HTTP deliveries of the socket.io events (Standard Webhooks), durable and retried' },
        { name: 'keys', description: 'Scoped API keys: each sees only its sessions, with the scopes read, send and manage (the admin key is API_KEY)' },
        { name: 'events', description: 'The event log: catch up on missed events by eventId' }
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The admin key (API_KEY) or a scoped key (stk_…); each operation says the scope it needs (`x-scopes`)' },
          bearer: { type: 'http', scheme: 'bearer', description: 'The same keys as `Authorization: Bearer <key>`' }
        },
        schemas: {
          ...Object.fromEntries(Object.entries(EventSchemas).map(([name, schema]) => [
            'Event' + name.split('-').map((w) => w[0].toUpperCase() + w.slice(1)).join(''),
            JSON.parse(JSON.stringify(schema)) as object
          ])),
          // what a webhook receiver gets (POST, signed with the webhook-id / webhook-timestamp / webhook-signature headers)
          WebhookBody: JSON.parse(JSON.stringify(WebhookBodySchema)) as object
        }
      },
      security: [{ apiKey: [] }, { bearer: [] }]
    },
    // every operation gets a stable operationId (getSessionsQrCode, postSessionsSendStatus, …) for client generators,
    // unless its route names one itself; every /api operation names the scope it needs (`x-scopes`, and a line of
    // its description): the scope its route declares (`config.scope`), the one the service enforces
    transform: ({ schema, url, route }) => {
      const path = url.replace(/^\/api/, '').split('/').filter((p) => p !== '' && !p.startsWith(':'))
      const method = (Array.isArray(route.method) ? route.method[0] : route.method).toLowerCase()
      const own = (schema as { operationId?: unknown } | undefined)?.operationId
      const operationId = typeof own === 'string' ? own : method + path.map((p) => p.split('-').map((w) => w[0].toUpperCase() + w.slice(1)).join('')).join('')
      if (!url.startsWith('/api/')) return { schema: { ...schema, operationId } as typeof schema, url }
      const scope = route.config?.scope ?? 'admin'
      const description = [(schema as { description?: string } | undefined)?.description, scopeLine(scope)].filter((d) => d !== undefined).join('\n\n')
      return { schema: { ...schema, operationId, description, 'x-scopes': scope === 'any' ? [] : [scope] } as typeof schema, url }
    },
    // paths in a fixed order (by path, as written), whatever order the plugins register their routes in
    transformObject: (doc) => {
      const document = 'openapiObject' in doc ? doc.openapiObject : doc.swaggerObject
      if (document.paths === undefined) return document
      return { ...document, paths: Object.fromEntries(Object.entries(document.paths).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) }
    },
    refResolver: {
      // shared schemas appear under their $id (e.g. ErrorEnvelope) instead of def-N
      buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}`
    }
  })
  // the docs are public (keys/route-scope.ts): every route swagger-ui adds says so
  await app.register(async (docs) => {
    docs.addHook('onRoute', markPublic)
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { docExpansion: 'list', deepLinking: true, validatorUrl: null },
      // the dashboard's policy (helmet, every response) except for styles: swagger-ui injects inline styles
      staticCSP: CONTENT_SECURITY_POLICY.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")
    })
  })
}, { name: 'swagger' })
