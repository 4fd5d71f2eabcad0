import assert from 'node:assert/strict'
import { test } from 'node:test'
import { io as connect } from 'socket.io-client'
import { spawnService } from '../support/service.js'

// Scoped keys never reach the log (at debug, the most talkative level), whichever way they are sent or
// refused; with TRUST_PROXY the logged address is the forwarded client's.

const KEY = 'admin-key-for-the-logs-0123456789'

test('logs: scoped keys leave no trace in the log; TRUST_PROXY logs the forwarded client address', { timeout: 60_000 }, async (t) => {
  const svc = await spawnService({ t, apiKey: KEY, readyWhen: 'listening', env: { LOG_LEVEL: 'debug', TRUST_PROXY: '127.0.0.1' } })
  const made = await fetch(`${svc.base}/api/keys`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.7' },
    body: JSON.stringify({ name: 'tenant', sessions: '*', scopes: ['read'] })
  })
  assert.equal(made.status, 200)
  const { id, key } = (await made.json() as { data: { id: string, key: string } }).data
  // the secret is what follows `stk_<id>_` (it may itself hold `_`: base64url)
  const secret = key.slice(`stk_${id}_`.length)
  assert.equal(secret.length, 43)
  const wrong = `stk_${id}_${'A'.repeat(43)}`
  const tries: Array<Record<string, string>> = [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }, { authorization: `bearer ${wrong}` }, { 'x-api-key': wrong }]
  for (const headers of tries) {
    await fetch(`${svc.base}/api/sessions`, { headers })
  }
  for (const apiKey of [key, wrong]) {
    const socket = connect(svc.base, { auth: { apiKey }, transports: ['websocket'], reconnection: false, forceNew: true })
    await new Promise<void>((resolve) => { socket.once('connect', () => { resolve() }); socket.once('connect_error', () => { resolve() }) })
    socket.close()
  }
  await fetch(`${svc.base}/api/keys/${id}`, { method: 'DELETE', headers: { 'x-api-key': KEY } })
  await fetch(`${svc.base}/api/sessions`, { headers: { authorization: `Bearer ${key}` } })
  await svc.stop()

  const all = svc.lines
  assert.ok(all.length > 10, `log lines: ${all.length}`)
  assert.deepEqual(all.filter((l) => l.includes(secret) || l.includes(KEY) || l.includes('A'.repeat(43))), [])
  const addresses = svc.stdout.map((l) => (JSON.parse(l) as { req?: { remoteAddress?: string } }).req?.remoteAddress).filter((a) => a !== undefined)
  assert.ok(addresses.includes('203.0.113.7'), `the forwarded client is logged: ${[...new Set(addresses)].join(', ')}`)
})
