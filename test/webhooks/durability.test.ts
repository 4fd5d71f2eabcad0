import assert from 'node:assert/strict'
import { test } from 'node:test'
import { tempDir } from '../support/processes.js'
import { spawnService, type ServiceProc } from '../support/service.js'
import { waitFor } from '../helper.js'
import { startReceiver } from './receiver.js'

// The outbox survives SIGKILL: the service runs as `npm start` runs it (the compiled server, its own
// process), deliveries are in flight and queued when it is killed, and after a restart on the same data
// folder every one of them arrives.

const KEY = 'webhook-durability-key-0123456789'

interface Delivery { id: string, status: string, messageId: string }

/** the service as `npm start` runs it, on the test's one folder (every restart keeps its data) */
async function startService (dir: string, name: string): Promise<ServiceProc> {
  return await spawnService({
    dir,
    name,
    apiKey: KEY,
    env: {
      ALLOW_PRIVATE_URLS: 'true',
      // two in flight at once, and they wait long: the kill finds some sending and the rest pending
      WEBHOOK_CONCURRENCY: '2',
      WEBHOOK_TIMEOUT_MS: '120000',
      WEBHOOK_BASE_DELAY_MS: '50',
      WEBHOOK_MAX_DELAY_MS: '200'
    }
  })
}

async function call<T> (base: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(base + path, {
    method,
    headers: { 'x-api-key': KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  const json = await res.json() as { success: boolean, data: T, error?: string }
  assert.equal(res.status, 200, `${method} ${path}: ${json.error ?? ''}`)
  return json.data
}

test('SIGKILL with webhook deliveries in flight and queued loses none: after a restart they all arrive', { timeout: 170_000 }, async (t) => {
  const dir = tempDir('webhook-kill-')
  t.after(() => { dir.rm() })
  const rx = await startReceiver(t, 'hang')

  const first = await startService(dir.path, 'first')
  t.after(async () => { await first.stop(1000) })
  const hook = await call<{ id: string, secret: string }>(first.base, 'POST', '/api/webhooks', { url: rx.url, events: ['session-created'] })
  const sessions = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6']
  for (const sessionId of sessions) {
    await call(first.base, 'POST', '/api/sessions', { sessionId, sessionName: `Kill ${sessionId}`, authMethod: 'qrcode' })
  }
  // the API answered after the event was emitted: every delivery row is committed by now
  await waitFor(() => rx.requests.length >= 2, 20_000, 'two deliveries in flight')
  const before = await call<{ deliveries: Delivery[] }>(first.base, 'GET', `/api/webhooks/${hook.id}/deliveries`)
  assert.equal(before.deliveries.length, sessions.length)
  assert.deepEqual(before.deliveries.map((d) => d.status).sort(), ['pending', 'pending', 'pending', 'pending', 'sending', 'sending'])

  first.child.kill('SIGKILL')
  assert.equal(await first.exited, null, 'killed by the signal')

  rx.mode = 200
  const second = await startService(dir.path, 'second')
  t.after(async () => { await second.stop(5000) })
  await waitFor(() => new Set(rx.accepted().map((r) => r.headers['webhook-id'])).size === sessions.length ? true : undefined, 30_000, 'every delivery after the restart')
  const got = rx.verified(hook.secret)
  assert.deepEqual([...new Set(got.map((j) => j.data.sessionId as string))].sort(), sessions)
  assert.ok(got.every((j) => j.type === 'session-created'))
  // the message ids are the ones written before the kill (receivers can drop the repeats of the two in flight)
  assert.deepEqual(new Set(rx.accepted().map((r) => r.headers['webhook-id'])), new Set(before.deliveries.map((d) => d.messageId)))

  await waitFor(async () => {
    const after = await call<{ deliveries: Delivery[] }>(second.base, 'GET', `/api/webhooks/${hook.id}/deliveries`)
    return after.deliveries.every((d) => d.status === 'succeeded') ? true : undefined
  }, 10_000, 'every delivery marked succeeded')
  assert.equal(await second.stop(10_000), 0, 'a clean stop')
})
