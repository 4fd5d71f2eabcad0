import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { failures, Ok } from '../../schemas/envelope.js'
import { CreateKeyBodySchema, KeyDeletedSchema, KeyParamsSchema, KeySchema, KeyWithSecretSchema, WhoAmISchema } from '../../schemas/keys.js'
import { BadRequest, KeyNotFound, Unauthorized } from '../../src/errors.js'

const tags = ['keys']

/** Scoped keys: the admin key creates, lists and revokes them; any key may ask who it is (`config.scope`, route-scope.ts). */
const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/keys', {
    config: { scope: 'admin' },
    schema: {
      tags,
      operationId: 'createKey',
      summary: 'Create a scoped key; the answer carries the key itself, shown only this once (the service keeps a hash)',
      body: CreateKeyBodySchema,
      response: { 200: Ok(KeyWithSecretSchema), ...failures(400) }
    }
  }, async (req) => {
    if (req.body.name.trim() === '') throw new BadRequest('body.name must not be blank')
    return { success: true as const, data: await app.keys.create(req.body) }
  })

  app.get('/keys', {
    config: { scope: 'admin' },
    schema: { tags, operationId: 'listKeys', summary: 'List the scoped keys (never their secrets)', response: { 200: Ok(Type.Array(KeySchema)), ...failures() } }
  }, async () => ({ success: true as const, data: await app.keys.list() }))

  app.get('/keys/me', {
    config: { scope: 'any' },
    schema: { tags, operationId: 'whoAmI', summary: 'The calling key: admin, or a scoped key with its sessions and scopes', response: { 200: Ok(WhoAmISchema), ...failures() } }
  }, async (req) => {
    const p = req.principal
    if (p === null) throw new Unauthorized()
    return {
      success: true as const,
      data: { admin: p.admin, id: p.id, name: p.name, sessions: p.sessions === '*' ? '*' as const : [...p.sessions], scopes: [...p.scopes] }
    }
  })

  app.delete('/keys/:id', {
    config: { scope: 'admin' },
    schema: {
      tags,
      operationId: 'revokeKey',
      summary: 'Revoke a key at once: its next request is refused and its open socket.io connections are closed',
      params: KeyParamsSchema,
      response: { 200: Ok(KeyDeletedSchema), ...failures(400, 404) }
    }
  }, async (req) => {
    if (!await app.keys.revoke(req.params.id)) throw new KeyNotFound()
    return { success: true as const, data: { id: req.params.id, message: 'Key revoked' } }
  })
}

export default routes
