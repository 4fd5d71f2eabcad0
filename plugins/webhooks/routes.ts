import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { failures, Ok } from '../../schemas/envelope.js'
import {
  CreateWebhookBodySchema, DeliveriesQuerySchema, DeliveryPageSchema, DeliveryParamsSchema, DeliverySchema, UpdateWebhookBodySchema,
  WebhookDeletedSchema, WebhookParamsSchema, WebhookSchema, WebhookWithSecretSchema
} from '../../schemas/webhook.js'

const tags = ['webhooks']

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/webhooks', {
    config: { scope: 'manage' },
    schema: {
      tags,
      operationId: 'createWebhook',
      summary: 'Register a webhook endpoint; the answer carries its signing secret, shown only this once',
      description: 'Made with a scoped key, the endpoint receives only the events of the sessions that key sees (as they are when each event happens), and only that key sees the endpoint.',
      body: CreateWebhookBodySchema,
      response: { 200: Ok(WebhookWithSecretSchema), ...failures(400) }
    }
  }, async (req) => ({ success: true as const, data: await app.webhooks.create(req.body, req.principal ?? undefined) }))

  app.get('/webhooks', {
    config: { scope: 'read' },
    schema: { tags, operationId: 'listWebhooks', summary: 'List webhook endpoints (without their secrets); a scoped key sees those it created', response: { 200: Ok(Type.Array(WebhookSchema)), ...failures() } }
  }, async (req) => ({ success: true as const, data: await app.webhooks.list(req.principal ?? undefined) }))

  app.get('/webhooks/:id', {
    config: { scope: 'read' },
    schema: { tags, operationId: 'getWebhook', summary: 'One webhook endpoint (without its secret)', params: WebhookParamsSchema, response: { 200: Ok(WebhookSchema), ...failures(400, 404) } }
  }, async (req) => ({ success: true as const, data: await app.webhooks.get(req.params.id, req.principal ?? undefined) }))

  app.patch('/webhooks/:id', {
    config: { scope: 'manage' },
    schema: {
      tags,
      operationId: 'updateWebhook',
      summary: 'Change the URL, events or description, or enable / disable an endpoint (enabling resumes its pending deliveries)',
      params: WebhookParamsSchema,
      body: UpdateWebhookBodySchema,
      response: { 200: Ok(WebhookSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await app.webhooks.update(req.params.id, req.body, req.principal ?? undefined) }))

  app.delete('/webhooks/:id', {
    config: { scope: 'manage' },
    schema: { tags, operationId: 'deleteWebhook', summary: 'Remove an endpoint and its deliveries', params: WebhookParamsSchema, response: { 200: Ok(WebhookDeletedSchema), ...failures(400, 404) } }
  }, async (req) => {
    await app.webhooks.remove(req.params.id, req.principal ?? undefined)
    return { success: true as const, data: { id: req.params.id, message: 'Webhook deleted' } }
  })

  app.post('/webhooks/:id/rotate-secret', {
    config: { scope: 'manage' },
    schema: {
      tags,
      operationId: 'rotateWebhookSecret',
      summary: 'Replace the signing secret; the new one is in the answer, shown only this once, and signs every attempt from now on',
      params: WebhookParamsSchema,
      response: { 200: Ok(WebhookWithSecretSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await app.webhooks.rotateSecret(req.params.id, req.principal ?? undefined) }))

  app.get('/webhooks/:id/deliveries', {
    config: { scope: 'read' },
    schema: {
      tags,
      operationId: 'listWebhookDeliveries',
      summary: 'Deliveries of an endpoint, newest first, with their attempts, last answer and next attempt (kept WEBHOOK_RETENTION_HOURS, 7 days by default)',
      params: WebhookParamsSchema,
      querystring: DeliveriesQuerySchema,
      response: { 200: Ok(DeliveryPageSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await app.webhooks.deliveries(req.params.id, req.query, req.principal ?? undefined) }))

  app.post('/webhooks/:id/deliveries/:deliveryId/retry', {
    config: { scope: 'manage' },
    schema: {
      tags,
      operationId: 'retryWebhookDelivery',
      summary: 'Send a delivery again now with a fresh retry schedule (a failed one, or a succeeded one to replay it)',
      params: DeliveryParamsSchema,
      response: { 200: Ok(DeliverySchema), ...failures(400, 404, 409) }
    }
  }, async (req) => ({ success: true as const, data: await app.webhooks.retry(req.params.id, req.params.deliveryId, req.principal ?? undefined) }))
}

export default routes
