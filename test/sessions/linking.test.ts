import { test } from 'node:test'
import assert from 'node:assert/strict'
import { build, waitFor } from '../helper.js'
import { startStack } from '../stack.js'
import { dbOf } from '../support/db.js'

const json = { 'content-type': 'application/json' }
const PNG_DATA_URL = /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/

test('pairing-code linking: event and GET agree, the phone enters the code, the session opens', async (t) => {
  const s = await startStack(t)
  const number = '15551230001'
  s.emu.createAccount(number)
  const created = await s.api({ method: 'POST', url: '/api/sessions', headers: json, payload: JSON.stringify({ sessionId: 'pair', sessionName: 'Pair', phoneNumber: number }) })
  assert.equal(created.statusCode, 200)
  const createdEvent = await s.events.next('session-created', (e) => e.sessionId === 'pair')
  assert.equal(typeof (createdEvent as { eventId?: unknown }).eventId, 'number', 'a logged event carries its eventId')
  assert.deepEqual({ ...createdEvent, createdAt: undefined, eventId: undefined }, { sessionId: 'pair', sessionName: 'Pair', phoneNumber: number, authMethod: 'pairing', createdAt: undefined, eventId: undefined })

  const event = await s.events.next('pairing-code', (e) => e.sessionId === 'pair', 20_000)
  assert.match(event.pairingCode, /^[A-Z0-9]{8}$/)
  assert.equal(event.phoneNumber, number)
  assert.equal(event.authMethod, 'pairing')
  const got = (await s.api({ method: 'GET', url: '/api/sessions/pair/pairing-code' })).json().data
  assert.deepEqual(got, { sessionId: 'pair', pairingCode: event.pairingCode, phoneNumber: number, connected: false })

  await s.emu.enterCode(number, event.pairingCode)
  const open = await s.events.next('connection-status', (e) => e.sessionId === 'pair' && e.status === 'open', 30_000)
  assert.equal(open.connected, true)
  assert.equal(open.ownNumber, number)
  const status = (await s.api({ method: 'GET', url: '/api/sessions/pair/connection-status' })).json().data
  assert.deepEqual(status, { sessionId: 'pair', connected: true, status: 'open', authMethod: 'pairing', pairingCode: null, qrCode: null, phoneNumber: number, ownNumber: number })

  const again = await s.api({ method: 'POST', url: '/api/sessions/pair/request-pairing-code' })
  assert.equal(again.statusCode, 400)
  assert.deepEqual(again.json(), { success: false, error: 'Session is already connected' })
  const stats = (await s.api({ method: 'GET', url: '/api/stats' })).json().data
  assert.equal(stats.connectedSessions, 1)
})

test('QR linking (phoneNumber: null): the qr-code event carries a PNG the phone scans; restart reconnects; delete logs out and removes every row', async (t) => {
  const s = await startStack(t)
  const number = '15551230002'
  s.emu.createAccount(number)
  // the seed contract's form: phoneNumber "null or absent for QR sessions"
  const created = await s.api({ method: 'POST', url: '/api/sessions', headers: json, payload: JSON.stringify({ sessionId: 'qr', sessionName: 'QR', authMethod: 'qrcode', phoneNumber: null }) })
  assert.equal(created.statusCode, 200, created.body)
  assert.deepEqual([created.json().data.authMethod, created.json().data.phoneNumber], ['qrcode', null])
  const qr = await s.events.next('qr-code', (e) => e.sessionId === 'qr', 20_000)
  assert.match(qr.qrCode, PNG_DATA_URL)
  assert.equal(qr.authMethod, 'qrcode')
  const got = (await s.api({ method: 'GET', url: '/api/sessions/qr/qr-code' })).json().data
  assert.equal(got.connected, false)
  assert.match(got.qrCode, PNG_DATA_URL)

  await s.emu.scan(number, got.qrCode)
  await s.events.next('connection-status', (e) => e.sessionId === 'qr' && e.status === 'open', 30_000)
  const list = (await s.api({ method: 'GET', url: '/api/sessions' })).json().data
  assert.deepEqual(list.map((x: Record<string, unknown>) => [x.sessionId, x.connected, x.ownNumber, x.qrCode]), [['qr', true, number, null]])

  const since = s.events.seen.length
  const restarted = await s.api({ method: 'POST', url: '/api/sessions/qr/restart' })
  assert.equal(restarted.statusCode, 200)
  await waitFor(() => s.events.seen.slice(since).some((e) => e.event === 'connection-status' && (e.payload as { status: string }).status === 'open'), 30_000, 'reopen after restart')
  assert.equal(s.events.seen.slice(since).filter((e) => e.event === 'qr-code').length, 0, 'no new linking after a restart')

  const devicesBefore = s.emu.getAccount(number).linkedDevices.length
  assert.equal(devicesBefore, 1)
  const del = await s.api({ method: 'DELETE', url: '/api/sessions/qr' })
  assert.equal(del.statusCode, 200)
  await s.events.next('session-deleted', (e) => e.sessionId === 'qr')
  await waitFor(() => s.emu.getAccount(number).linkedDevices.length === 0, 10_000, 'the device to be logged out in the emulator')
  const { db } = dbOf(s.app)
  for (const table of ['sessions', 'auth_creds', 'auth_keys', 'statuses'] as const) {
    const rows = await db.selectFrom(table).selectAll().execute()
    assert.equal(rows.length, 0, `${table} is empty`)
  }
})

test('a linked session reconnects by itself after the service restarts', async (t) => {
  const s = await startStack(t)
  const number = '15551230003'
  await s.link('keep', number)
  const dir = s.dir
  await s.app.close()

  const again = await build(t, { WA_WEBSOCKET_URL: s.emu.wsUrl, WA_TEST_TRUST_ROOT: s.emu.rootPublicKey }, { keepDir: dir })
  await waitFor(() => again.app.platform.snapshot('keep')?.connected, 30_000, 'the restored session to open')
  const status = (await again.api({ method: 'GET', url: '/api/sessions/keep/connection-status' })).json().data
  assert.equal(status.connected, true)
  assert.equal(status.ownNumber, number)
  assert.equal(status.qrCode, null)
  assert.equal(s.emu.getAccount(number).linkedDevices.length, 1, 'no second link was made')
})

test('faults: a dropped connection reconnects; a logout ends in logged-out and the session links again with a new code', async (t) => {
  const s = await startStack(t)
  const number = '15551230004'
  s.emu.createAccount(number)
  await s.api({ method: 'POST', url: '/api/sessions', headers: json, payload: JSON.stringify({ sessionId: 'f', sessionName: 'Faults', phoneNumber: number }) })
  const first = await s.events.next('pairing-code', (e) => e.sessionId === 'f', 20_000)
  await s.emu.enterCode(number, first.pairingCode)
  await s.events.next('connection-status', (e) => e.sessionId === 'f' && e.status === 'open', 30_000)

  let since = s.events.seen.length
  s.emu.fault(number, 'drop')
  await waitFor(() => s.events.seen.slice(since).some((e) => e.event === 'connection-status' && (e.payload as { status: string }).status === 'close'), 10_000, 'close after drop')
  await waitFor(() => s.events.seen.slice(since).some((e) => e.event === 'connection-status' && (e.payload as { status: string }).status === 'open'), 30_000, 'reopen after drop')

  since = s.events.seen.length
  s.emu.fault(number, 'logout')
  const loggedOut = await waitFor(() => s.events.seen.slice(since).find((e) => e.event === 'connection-status' && (e.payload as { status: string }).status === 'logged-out'), 15_000, 'logged-out')
  assert.deepEqual({ ...(loggedOut.payload as object), reason: undefined, eventId: undefined }, { sessionId: 'f', connected: false, status: 'logged-out', ownNumber: null, reason: undefined, eventId: undefined })
  const row = await dbOf(s.app).db.selectFrom('sessions').selectAll().where('id', '=', 'f').executeTakeFirstOrThrow()
  assert.equal(row.linked, 0)
  assert.equal((await dbOf(s.app).db.selectFrom('auth_keys').selectAll().where('session_id', '=', 'f').execute()).length, 0, 'auth state cleared')

  const fresh = await s.api({ method: 'POST', url: '/api/sessions/f/request-pairing-code' })
  assert.equal(fresh.statusCode, 200, fresh.body)
  const code = fresh.json().data.pairingCode as string
  assert.match(code, /^[A-Z0-9]{8}$/)
  assert.notEqual(code, first.pairingCode)
  await s.emu.enterCode(number, code)
  await waitFor(() => s.app.platform.snapshot('f')?.connected, 30_000, 'relinked session to open')
})
