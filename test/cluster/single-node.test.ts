import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build } from '../helper.js'
import { insertSession } from '../support/sessions.js'

// Without DATABASE_URL there is one node: GET /api/cluster shows it with every session, nothing is forwarded.

test('single-node mode: /api/cluster is this node with every session', async (t) => {
  const { app, api } = await build(t, { NODE_ID: 'solo' })
  assert.equal(app.cluster.enabled, false)
  for (const id of ['b-session', 'a-session']) {
    await insertSession(app, id)
  }
  const res = await api({ method: 'GET', url: '/api/cluster' })
  assert.equal(res.statusCode, 200)
  const body = res.json<{ success: true, data: { self: string, nodes: Array<{ nodeId: string, url: string, sessions: string[], lastSeen: string }> } }>()
  assert.equal(body.data.self, 'solo')
  assert.equal(body.data.nodes.length, 1)
  assert.deepEqual(body.data.nodes[0].sessions, ['a-session', 'b-session'])
  assert.equal(body.data.nodes[0].nodeId, 'solo')
  assert.ok(!Number.isNaN(Date.parse(body.data.nodes[0].lastSeen)))
})

test('lease timing is checked at start: a renewal interval over a third of the TTL is refused', async (t) => {
  await assert.rejects(build(t, { LEASE_TTL_MS: '3000', LEASE_RENEW_MS: '1500' }), /Invalid setting LEASE_RENEW_MS/)
})
