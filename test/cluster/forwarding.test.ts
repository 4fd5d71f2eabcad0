import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import pg from 'pg'
import { startEmulator, testCertPaths } from '@status-tracker/emulator'
import { waitFor } from '../helper.js'
import { postgresUrl, usePostgres } from '../support/db-matrix.js'
import { FORWARD, ForwardVerifier, forwardHeaders } from '../../plugins/cluster/signature.js'
import { CLUSTER_KEY, nodeApi, ownership, planNode, startNode } from './nodes.js'

// Node-to-node forwarding is authenticated with the cluster's own secret, not the caller's API key: the
// forwarding node checks the caller's key and passes on its signed decision (plugins/cluster/signature.ts).

const SECRET = 'test-cluster-secret-0123456789abcdef'

// one PostgreSQL server for the file (started by the first test that needs it), a fresh database per test
usePostgres()

test('forward signatures: valid once, within the window, for exactly the signed method, path and body', () => {
  const v = new ForwardVerifier(SECRET)
  const now = 1_800_000_000_000
  const h = forwardHeaders(SECRET, 'node-a', 'key:0123456789abcdef', 'POST', '/api/sessions/s/send-status', '{"type":"text"}', now)
  assert.equal(v.check(h, 'POST', '/api/sessions/s/send-status', now + 1000), null)
  assert.match(v.check(h, 'POST', '/api/sessions/t/send-status', now) ?? '', /bad signature/, 'another path')
  assert.match(v.check(h, 'DELETE', '/api/sessions/s/send-status', now) ?? '', /bad signature/, 'another method')
  assert.match(v.check({ ...h, [FORWARD.by]: 'node-x' }, 'POST', '/api/sessions/s/send-status', now) ?? '', /bad signature/, 'another sender')
  assert.match(v.check({ ...h, [FORWARD.grant]: 'admin' }, 'POST', '/api/sessions/s/send-status', now) ?? '', /bad signature/, 'another grant (a scoped key\'s made admin)')
  assert.match(v.check({ ...h, [FORWARD.grant]: 'api-key' }, 'POST', '/api/sessions/s/send-status', now) ?? '', /bad signature|unknown grant/, 'a grant of no known form')
  assert.match(v.check(h, 'POST', '/api/sessions/s/send-status', now + 61_000) ?? '', /too long ago/)
  assert.match(new ForwardVerifier('another-secret-0123456789abcdef0123').check(h, 'POST', '/api/sessions/s/send-status', now) ?? '', /bad signature/)
  assert.match(new ForwardVerifier(null).check(h, 'POST', '/api/sessions/s/send-status', now) ?? '', /not in cluster mode/)
  assert.equal(v.bodyMatches(h, { type: 'text' }), true)
  assert.equal(v.bodyMatches(h, { type: 'image' }), false)
  assert.equal(v.accept(h, 'POST', '/api/sessions/s/send-status', now), null)
  assert.equal(v.accept(h, 'POST', '/api/sessions/s/send-status', now), 'replayed')
  const { [FORWARD.signature]: _, ...unsigned } = h
  assert.match(v.check(unsigned, 'POST', '/api/sessions/s/send-status', now) ?? '', /incomplete/)
})

test('two nodes forward with the stored cluster secret, never the API key; unsigned, forged, replayed or altered forwards get 401', { timeout: 170_000 }, async (t) => {
  const emu = await startEmulator({ tls: testCertPaths() })
  t.after(async () => { await emu.stop() })
  const databaseUrl = await postgresUrl()
  const dir = mkdtempSync(join(tmpdir(), 'st-forward-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  // no CLUSTER_SECRET: the first node generates one into the shared database
  const env = { DATABASE_URL: databaseUrl, UPLOAD_DIR: join(dir, 'uploads'), WA_WEBSOCKET_URL: emu.wsUrl, WA_TEST_TRUST_ROOT: emu.rootPublicKey, NODE_EXTRA_CA_CERTS: emu.caFile }
  const a = await startNode(t, await planNode(dir, 'node-a'), env)
  const b = await startNode(t, await planNode(dir, 'node-b'), env)
  const db = new pg.Client({ connectionString: databaseUrl })
  db.on('error', () => {})
  await db.connect()
  t.after(async () => { await db.end() })
  const stored = (await db.query<{ secret: string }>('select secret from cluster_secret')).rows
  assert.equal(stored.length, 1, 'one shared secret')
  assert.ok(stored[0].secret.length >= 32)
  const secret = stored[0].secret

  // one session per node (POST /sessions goes to the least-loaded node)
  for (const sessionId of ['s1', 's2']) await nodeApi(a.base).post('/sessions', { sessionId, sessionName: sessionId, authMethod: 'qrcode' })
  const owners = await waitFor(async () => {
    const o = await ownership(a.base)
    return o['node-a']?.length === 1 && o['node-b']?.length === 1 ? o : undefined
  }, 30_000, 'one session on each node')
  const onB = owners['node-b'][0]

  // through A, answered by B: the caller's key was checked by A, B trusted A's signature
  const res = await fetch(`${a.base}/api/sessions/${onB}/connection-status`, { headers: { 'x-api-key': CLUSTER_KEY } })
  assert.equal(res.status, 200, await res.clone().text())
  assert.equal(res.headers.get('x-status-tracker-node'), 'node-b')
  assert.equal((await res.json() as { data: { sessionId: string } }).data.sessionId, onB)
  // a wrong key is refused by A before anything is forwarded
  assert.equal((await fetch(`${a.base}/api/sessions/${onB}/connection-status`, { headers: { 'x-api-key': 'wrong-key-0123456789abcdef' } })).status, 401)

  // a scoped key goes by its id (the grant `key:<id>`): B reads the key's sessions and scopes itself
  const made = await nodeApi(a.base).post<{ id: string, key: string }>('/keys', { name: 'tenant', sessions: [onB], scopes: ['read'] })
  const asTenant = { 'x-api-key': made.key }
  const scoped = await fetch(`${a.base}/api/sessions/${onB}/connection-status`, { headers: asTenant })
  assert.equal(scoped.status, 200, await scoped.clone().text())
  assert.equal(scoped.headers.get('x-status-tracker-node'), 'node-b')
  const onA = owners['node-a'][0]
  assert.equal((await fetch(`${b.base}/api/sessions/${onA}/connection-status`, { headers: asTenant })).status, 404, 'another session is not found for the key')
  const tenantSend = await fetch(`${a.base}/api/sessions/${onB}/send-status`, { method: 'POST', headers: { ...asTenant, 'content-type': 'application/json' }, body: JSON.stringify({ type: 'text', content: 'x' }) })
  assert.equal(tenantSend.status, 403, 'a read key cannot send')
  // signed by A for that key: B applies the key's scope too, and refuses a key that is gone
  const sendPath = `/api/sessions/${onB}/send-status`
  const sendBody = JSON.stringify({ type: 'text', content: 'x' })
  const forged = await fetch(`${b.base}${sendPath}`, { method: 'POST', headers: { ...forwardHeaders(secret, 'node-a', `key:${made.id}`, 'POST', sendPath, sendBody), 'content-type': 'application/json' }, body: sendBody })
  assert.equal(forged.status, 403, 'the owner checks the scope of the key named in the grant')
  const gone = forwardHeaders(secret, 'node-a', 'key:0000000000000000', 'GET', `/api/sessions/${onB}/connection-status`, undefined)
  assert.equal((await fetch(`${b.base}/api/sessions/${onB}/connection-status`, { headers: gone })).status, 401, 'an unknown key in the grant')

  const path = `/api/sessions/${onB}/connection-status`
  const direct = async (headers: Record<string, string>, method = 'GET', body?: string): Promise<number> =>
    (await fetch(`${b.base}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })).status
  // the forwarded marker with the right API key but no signature (what forwarding used to be): refused
  assert.equal(await direct({ [FORWARD.by]: 'node-a', 'x-api-key': CLUSTER_KEY }), 401)
  // signed with another secret: refused
  assert.equal(await direct(forwardHeaders('a-forged-secret-0123456789abcdef0123', 'node-a', 'admin', 'GET', path, undefined)), 401)
  // signed with the cluster's secret and no API key at all: accepted once, the replay refused
  const signed = forwardHeaders(secret, 'node-a', 'admin', 'GET', path, undefined)
  assert.equal(await direct(signed), 200)
  assert.equal(await direct(signed), 401, 'a replay')
  // a body other than the signed one: refused
  const phonePath = `/api/sessions/${onB}/phone-number`
  const altered = forwardHeaders(secret, 'node-a', 'admin', 'PUT', phonePath, JSON.stringify({ phoneNumber: '15550000001' }))
  const put = await fetch(`${b.base}${phonePath}`, { method: 'PUT', headers: { ...altered, 'content-type': 'application/json' }, body: JSON.stringify({ phoneNumber: '15550000002' }) })
  assert.equal(put.status, 401)
  assert.ok(b.output.some((l) => l.includes('refused a forwarded request')), 'B logs why it refused')
  assert.ok(!b.output.some((l) => l.includes(CLUSTER_KEY)) && !a.output.some((l) => l.includes(secret)), 'neither the key nor the secret in the logs')
})

test('nodes whose CLUSTER_SECRET differs refuse each other: the caller gets 503 naming the setting', { timeout: 170_000 }, async (t) => {
  const databaseUrl = await postgresUrl()
  const dir = mkdtempSync(join(tmpdir(), 'st-forward-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const env = { DATABASE_URL: databaseUrl, UPLOAD_DIR: join(dir, 'uploads'), WA_WEBSOCKET_URL: 'ws://127.0.0.1:9' }
  const a = await startNode(t, await planNode(dir, 'node-a'), { ...env, CLUSTER_SECRET: SECRET })
  const b = await startNode(t, await planNode(dir, 'node-b'), { ...env, CLUSTER_SECRET: SECRET.replace('test', 'else') })
  // B has fewer sessions after A holds one: the second is created on B (a forward from A)
  const first = await nodeApi(a.base).call('POST', '/sessions', { sessionId: 'x1', sessionName: 'x1', authMethod: 'qrcode' })
  assert.equal(first.status, 200, first.body)
  const owners = await ownership(a.base)
  const holder = owners['node-a']?.includes('x1') === true ? a : b
  const other = holder === a ? b : a
  const res = await nodeApi(other.base).call('GET', '/sessions/x1/connection-status')
  assert.equal(res.status, 503, res.body)
  assert.match(res.body, /CLUSTER_SECRET differs/)
  // a signature with the node's own CLUSTER_SECRET is what it accepts
  const path = '/api/sessions/x1/connection-status'
  const ok = await fetch(`${holder.base}${path}`, { headers: forwardHeaders(holder === a ? SECRET : SECRET.replace('test', 'else'), 'node-z', 'admin', 'GET', path, undefined) })
  assert.equal(ok.status, 200)
})
