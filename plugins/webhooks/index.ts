import fp from 'fastify-plugin'
import routes from './routes.js'
import { createWebhookService, type WebhookService } from './service.js'

export { DELIVERY_RETENTION_MS } from './service.js'
export { retryDelay } from './worker.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** webhook endpoints, their durable outbox and the delivery worker */
    webhooks: WebhookService
  }
}

export default fp(async (app) => {
  const service = createWebhookService({ store: app.stores.webhooks, config: app.config, log: app.log.child({ plugin: 'webhooks' }), keySees: app.keys.keySees, eventLog: app.eventLog })
  app.decorate('webhooks', service)
  // the endpoints are read before the first event can be enqueued
  await service.start()
  // before the database closes (this plugin depends on it): attempts in flight are aborted and stay pending
  app.addHook('onClose', async () => { await service.stop() })
  await app.register(routes, { prefix: '/api' })
}, { name: 'webhooks', dependencies: ['config', 'db', 'auth', 'domain-events'] })
