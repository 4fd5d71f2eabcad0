import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Validator } from '@seriousme/openapi-schema-validator'
import { build } from '../helper.js'

interface Operation { operationId?: string, tags?: string[], summary?: string, responses?: Record<string, unknown>, security?: unknown }

test('the OpenAPI document is public, valid, and every operation is documented', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ url: '/docs/json' })
  assert.equal(res.statusCode, 200)
  const doc = res.json()
  const result = await new Validator().validate(doc)
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2))
  assert.ok(doc.components.schemas.ErrorEnvelope, 'one shared error envelope')
  assert.ok(doc.components.securitySchemes.apiKey)
  // issue 15: reactions and replies (routes, events, counts)
  assert.ok(doc.components.schemas.EventStatusReaction && doc.components.schemas.EventStatusReply)
  for (const path of ['/api/sessions/{sessionId}/status-reactions/{statusId}', '/api/sessions/{sessionId}/status-replies/{statusId}']) {
    assert.ok(doc.paths[path]?.get, `${path} is documented`)
  }
  const reply = JSON.stringify(doc.paths['/api/sessions/{sessionId}/status-replies/{statusId}'].get.responses['200'])
  for (const field of ['jid', 'number', 'text', 'repliedAt', 'messageId']) assert.ok(reply.includes(`"${field}"`), `reply has ${field}`)
  assert.ok(JSON.stringify(doc.paths['/api/sessions/{sessionId}/sent-statuses'].get.responses['200']).includes('reactionCount'))
  const paths = doc.paths as Record<string, Record<string, Operation>>
  assert.ok(Object.keys(paths).length >= 3)
  // OpenAPI 3 requires each operationId once (client generators name methods by it; openapi-typescript refuses the document)
  const ids = Object.values(paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId))
  assert.deepEqual(ids.filter((id, i) => id === undefined || ids.indexOf(id) !== i), [], 'every operation has its own operationId (a route whose generated one repeats another names its own: schema.operationId)')
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const where = `${method.toUpperCase()} ${path}`
      assert.ok(op.tags !== undefined && op.tags.length > 0, `${where} has tags`)
      assert.ok(op.summary, `${where} has a summary`)
      assert.ok(op.responses?.['200'], `${where} documents 200`)
      for (const code of ['401', '429', '500']) {
        assert.deepEqual(JSON.stringify(op.responses?.[code]).includes('ErrorEnvelope'), true, `${where} documents ${code} with the envelope`)
      }
    }
  }
  // issue 14: send-status answers 200 when it waited, 202 (`state: sending`) when it did not
  const send = paths['/api/sessions/{sessionId}/send-status']?.post
  const accepted = JSON.stringify(send?.responses?.['202'])
  assert.ok(send?.responses?.['200'] && accepted.includes('sending'), 'send-status documents 200 and 202')
  const ui = await app.inject({ url: '/docs' })
  assert.ok(ui.statusCode === 200 || ui.statusCode === 302)
})
