import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { waitFor } from '../helper.js'
import { startStack } from '../stack.js'
import { startReceiver } from './receiver.js'

// Webhooks through the whole stack: real Baileys linked to the emulator, a status sent through the API,
// views sent by the emulator's contacts, and receivers on 127.0.0.1 verifying with `standardwebhooks`.

const OWN = '4915200000001'
const A = '4915200000011'
const B = '4915200000012'
const SID = 'hooked'

interface Created { id: string, secret: string }

test('webhooks end to end: a status and its views reach receivers signed, in order, also after the receiver was failing', { timeout: 120_000 }, async (t) => {
  const s = await startStack(t, { ALLOW_PRIVATE_URLS: 'true', WEBHOOK_BASE_DELAY_MS: '50', WEBHOOK_MAX_DELAY_MS: '1000', WEBHOOK_MAX_ATTEMPTS: '100' })
  const live = await startReceiver(t)
  const flaky = await startReceiver(t, 503)
  const create = async (body: Record<string, unknown>): Promise<Created> => {
    const res = await s.api({ method: 'POST', url: '/api/webhooks', payload: body })
    assert.equal(res.statusCode, 200, res.body)
    return res.json<{ data: Created }>().data
  }
  const statusHook = await create({ url: live.url, events: ['status-sent', 'status-viewers-update'], sessionId: SID })
  const allHook = await create({ url: flaky.url, description: 'every event' })

  await s.link(SID, OWN)
  const sent = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content: 'Hooked on webhooks', targetNumbers: `${A},${B}` } })
  assert.equal(sent.statusCode, 200, sent.body)
  const { statusId, platformMessageId } = sent.json<{ data: { statusId: string, platformMessageId: string } }>().data
  await s.emu.waitForStatus((r) => r.id === platformMessageId && r.decrypted, 10_000)
  await s.emu.sendView(platformMessageId, { viewer: A, type: 'read', via: 'pn' })
  await s.events.next('status-viewers-update', (p) => p.statusId === statusId && p.viewers.length === 1, 10_000)
  await s.emu.sendView(platformMessageId, { viewer: B, type: 'played', via: 'lid' })
  await s.events.next('status-viewers-update', (p) => p.statusId === statusId && p.viewers.length === 2, 10_000)

  // the status endpoint: what socket.io clients got, signed, in the order it happened
  await waitFor(() => live.verified(statusHook.secret).some((j) => j.type === 'status-viewers-update' && (j.data.viewers as unknown[]).length === 2), 15_000, 'the second viewers update by webhook')
  const got = live.verified(statusHook.secret)
  assert.deepEqual(got.map((j) => j.type), ['status-sent', 'status-viewers-update', 'status-viewers-update'])
  const socketSent = s.events.all('status-sent', (p) => p.statusId === statusId)[0]
  assert.deepEqual(got[0].data, socketSent, 'data is the socket.io payload')
  assert.deepEqual(got[2].data, s.events.all('status-viewers-update', (p) => p.statusId === statusId).at(-1))
  assert.deepEqual((got[2].data.viewers as Array<{ number: string }>).map((v) => v.number).sort(), [A, B])
  for (const j of got) assert.ok(Math.abs(Date.parse(j.timestamp) - Date.now()) < 60_000)
  // a receiver with another secret cannot be fooled by these requests
  assert.throws(() => { new Webhook(allHook.secret).verify(live.accepted()[0].body, live.accepted()[0].headers) })

  // the every-event endpoint answered 503 all along: nothing is lost, and once it is back one status's
  // events arrive in the order they happened
  assert.ok(flaky.requests.length > 0)
  assert.equal(flaky.accepted().length, 0)
  flaky.mode = 200
  const socketEvents = s.events.seen.filter((e) => (e.payload as { sessionId?: string }).sessionId === SID)
  await waitFor(() => flaky.accepted().length >= socketEvents.length ? true : undefined, 20_000, `${socketEvents.length} deliveries to the recovered receiver`)
  const all = flaky.verified(allHook.secret)
  assert.deepEqual(all.map((j) => j.type).sort(), socketEvents.map((e) => e.event).sort(), 'every event the socket.io client saw')
  const ofStatus = all.filter((j) => j.data.statusId === statusId)
  assert.deepEqual(ofStatus.map((j) => [j.type, Array.isArray(j.data.viewers) ? j.data.viewers.length : null]),
    // statuses-updated (action sent): the seed contract's "the list changes", right after status-sent
    [['status-sent', null], ['statuses-updated', null], ['status-viewers-added', 1], ['status-viewers-update', 1], ['status-viewers-added', 1], ['status-viewers-update', 2]])
  const connection = all.filter((j) => j.type === 'connection-status').map((j) => j.data.status)
  assert.deepEqual(connection, socketEvents.filter((e) => e.event === 'connection-status').map((e) => (e.payload as { status: string }).status), 'one session\'s connection changes in order')
  assert.ok(connection.includes('open'))

  // the receiver has the request before the service has committed its answer: wait for the last commit
  type Page = { deliveries: Array<{ attempts: number, eventType: string }> }
  const succeeded = async (): Promise<Page> => {
    const res = await s.api({ method: 'GET', url: `/api/webhooks/${allHook.id}/deliveries?status=succeeded&limit=200` })
    assert.equal(res.statusCode, 200, res.body)
    return res.json<{ data: Page }>().data
  }
  const page = await waitFor(async () => { const p = await succeeded(); return p.deliveries.length >= all.length ? p : undefined }, 10_000, `${all.length} deliveries marked succeeded`)
  assert.equal(page.deliveries.length, all.length)
  assert.ok(page.deliveries.some((d) => d.attempts > 1), 'the early ones were retried')
})
