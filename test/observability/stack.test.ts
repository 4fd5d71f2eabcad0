import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { connect, createServer, type Socket } from 'node:net'
import { TEST_API_KEY, waitFor } from '../helper.js'
import { startStack, type Stack } from '../stack.js'
import { parsePrometheus, sampleValue } from './prometheus.js'

// Metrics and health with real Baileys against the emulator.

const OWN = '4915200000001'
const A = '4915200000011'
const B = '4915200000012'
const SID = 'obs'

async function metric (s: Stack, name: string, labels: Record<string, string> = {}): Promise<number> {
  const res = await s.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TEST_API_KEY}` } })
  assert.equal(res.statusCode, 200)
  return sampleValue(parsePrometheus(res.body), name, labels) ?? 0
}

async function health (s: Stack): Promise<{ status: string, checks: { sessions: Record<string, unknown> } }> {
  const res = await s.api({ method: 'GET', url: '/api/health' })
  assert.equal(res.statusCode, 200)
  return res.json().data
}

/**
 * A TCP relay between the service and the emulator: `refuse()` turns every new connection away (the
 * platform unreachable), `accept()` lets them through again. Existing connections are left alone.
 */
async function relay (t: TestContext): Promise<{ url: string, target: (port: number) => void, refuse: () => void, accept: () => void }> {
  let targetPort = 0
  let refusing = false
  const open = new Set<Socket>()
  const server = createServer((inbound) => {
    if (refusing || targetPort === 0) { inbound.destroy(); return }
    const outbound = connect(targetPort, '127.0.0.1')
    for (const s of [inbound, outbound]) {
      open.add(s)
      s.on('error', () => { inbound.destroy(); outbound.destroy() })
      s.on('close', () => { open.delete(s); inbound.destroy(); outbound.destroy() })
    }
    inbound.pipe(outbound).pipe(inbound)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    for (const s of open) s.destroy()
    await new Promise((resolve) => server.close(resolve))
  })
  const { port } = server.address() as { port: number }
  return {
    url: `ws://127.0.0.1:${port}/ws/chat`,
    target: (p) => { targetPort = p },
    refuse: () => { refusing = true },
    accept: () => { refusing = false }
  }
}

test('metrics and health against the emulator', { timeout: 120_000 }, async (t) => {
  const platform = await relay(t)
  const s = await startStack(t, { WA_WEBSOCKET_URL: platform.url, HEALTH_DISCONNECTED_MS: '300' })
  platform.target(Number(new URL(s.emu.wsUrl).port))
  await s.link(SID, OWN)

  await t.test('sessions and socket.io clients are gauges read at scrape time', async () => {
    assert.equal(await metric(s, 'status_tracker_sessions', { state: 'open' }), 1)
    assert.equal(await metric(s, 'status_tracker_sessions', { state: 'close' }), 0)
    assert.ok(await metric(s, 'status_tracker_socketio_clients') >= 1, 'the stack\'s own client')
  })

  let messageId = ''
  await t.test('a status sent through the emulator moves the statuses, recipients and send duration metrics', async () => {
    const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content: 'counted', targetNumbers: `${A},${B}` } })
    assert.equal(res.statusCode, 200, res.body)
    messageId = res.json<{ data: { platformMessageId: string } }>().data.platformMessageId
    assert.equal(await metric(s, 'status_tracker_statuses_total', { state: 'sent' }), 1)
    assert.equal(await metric(s, 'status_tracker_status_recipients_total'), 2)
    assert.equal(await metric(s, 'status_tracker_status_send_duration_seconds_count'), 1)
    assert.ok(await metric(s, 'status_tracker_status_send_duration_seconds_sum') > 0)
    assert.equal(await metric(s, 'status_tracker_http_request_duration_seconds_count', { route: '/api/sessions/:sessionId/send-status', status_code: '200' }), 1)
  })

  await t.test('receipts move the receipts counter by kind and the receipt-to-commit latency', async () => {
    await s.emu.waitForStatus((r) => r.id === messageId && r.decrypted, 10_000)
    await s.emu.sendView(messageId, { viewer: A, type: 'read' })
    await s.emu.sendView(messageId, { viewer: B, type: 'played', via: 'lid' })
    await s.emu.sendView(messageId, { viewer: B, type: 'delivery' })
    await waitFor(async () => await metric(s, 'status_tracker_receipts_total', { kind: 'delivery' }) >= 1 &&
      await metric(s, 'status_tracker_receipt_commit_latency_seconds_count') >= 2, 10_000, 'receipts in the metrics')
    assert.ok(await metric(s, 'status_tracker_receipts_total', { kind: 'read' }) >= 1)
    assert.ok(await metric(s, 'status_tracker_receipts_total', { kind: 'played' }) >= 1)
    const viewers = (await s.api({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })).json<{ data: Array<{ viewerCount: number }> }>().data
    assert.equal(viewers[0].viewerCount, 2, 'the views the latency was measured for are committed')
  })

  await t.test('health turns degraded while the platform drops the session and keeps it out, and healthy once it reconnects', async () => {
    const before = await health(s)
    assert.equal(before.status, 'healthy')
    assert.deepEqual(before.checks.sessions, { total: 1, connected: 1, connecting: 0, disconnected: 0, loggedOut: 0, disconnectedTooLong: [] })

    platform.refuse()
    s.emu.fault(OWN, 'drop')
    const degraded = await waitFor(async () => { const h = await health(s); return h.status === 'degraded' ? h : undefined }, 15_000, 'degraded')
    assert.deepEqual(degraded.checks.sessions.disconnectedTooLong, [SID])
    assert.equal(degraded.checks.sessions.connected, 0)
    assert.equal(await metric(s, 'status_tracker_sessions', { state: 'open' }), 0)

    platform.accept()
    await waitFor(() => s.app.platform.snapshot(SID)?.connected, 60_000, 'the session to reconnect')
    const back = await health(s)
    assert.equal(back.status, 'healthy')
    assert.deepEqual(back.checks.sessions, { total: 1, connected: 1, connecting: 0, disconnected: 0, loggedOut: 0, disconnectedTooLong: [] })
    assert.equal(await metric(s, 'status_tracker_sessions', { state: 'open' }), 1)
  })
})
