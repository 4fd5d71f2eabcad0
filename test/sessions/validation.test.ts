import { test } from 'node:test'
import assert from 'node:assert/strict'
import { build } from '../helper.js'
import { dbOf } from '../support/db.js'

const json = { 'content-type': 'application/json' }

test('create: bad input answers 400 naming the field, and stores nothing', async (t) => {
  const { api, app } = await build(t)
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ sessionName: 'x', phoneNumber: '15551234567' }, /^body\.sessionId is required$/],
    [{ sessionId: 'a b', sessionName: 'x', phoneNumber: '15551234567' }, /^body\.sessionId may contain only letters/],
    [{ sessionId: 'a/b', sessionName: 'x', phoneNumber: '15551234567' }, /^body\.sessionId may contain only letters/],
    [{ sessionId: 'x'.repeat(65), sessionName: 'x', phoneNumber: '15551234567' }, /^body\.sessionId /],
    [{ sessionId: 'ok', phoneNumber: '15551234567' }, /^body\.sessionName is required$/],
    [{ sessionId: 'ok', sessionName: '   ', phoneNumber: '15551234567' }, /^body\.sessionName must not be blank$/],
    [{ sessionId: 'ok', sessionName: 'x'.repeat(101), phoneNumber: '15551234567' }, /^body\.sessionName /],
    [{ sessionId: 'ok', sessionName: 'x' }, /^body\.phoneNumber is required when authMethod is 'pairing'$/],
    [{ sessionId: 'ok', sessionName: 'x', phoneNumber: null }, /^body\.phoneNumber is required when authMethod is 'pairing'$/],
    [{ sessionId: 'ok', sessionName: 'x', phoneNumber: 15551234567 }, /^body\.phoneNumber /],
    [{ sessionId: 'ok', sessionName: 'x', phoneNumber: '+15551234567' }, /^body\.phoneNumber must be 10 to 15 digits/],
    [{ sessionId: 'ok', sessionName: 'x', phoneNumber: '123456789' }, /^body\.phoneNumber must be 10 to 15 digits/],
    [{ sessionId: 'ok', sessionName: 'x', phoneNumber: '1234567890123456' }, /^body\.phoneNumber must be 10 to 15 digits/],
    [{ sessionId: 'ok', sessionName: 'x', authMethod: 'sms', phoneNumber: '15551234567' }, /^body\.authMethod /],
    [{ sessionId: 'ok', sessionName: 'x', authMethod: 'qrcode', phoneNumber: '15551234567' }, /only used when authMethod is 'pairing'/],
    [{ sessionId: 'ok', sessionName: 'x', phoneNumber: '15551234567', extra: 1 }, /^body\.extra is not an allowed field$/]
  ]
  for (const [body, message] of cases) {
    const res = await api({ method: 'POST', url: '/api/sessions', headers: json, payload: JSON.stringify(body) })
    assert.equal(res.statusCode, 400, JSON.stringify(body))
    assert.equal(res.json().success, false)
    assert.match(res.json().error, message, JSON.stringify(body))
  }
  const rows = await dbOf(app).db.selectFrom('sessions').selectAll().execute()
  assert.deepEqual(rows, [])
})

test('unknown sessions answer 404 on every session route', async (t) => {
  const { api } = await build(t)
  const routes: Array<[string, string, unknown?]> = [
    ['DELETE', '/api/sessions/nope'],
    ['POST', '/api/sessions/nope/restart'],
    ['PUT', '/api/sessions/nope/phone-number', { phoneNumber: '15551234567' }],
    ['GET', '/api/sessions/nope/connection-status'],
    ['GET', '/api/sessions/nope/pairing-code'],
    ['POST', '/api/sessions/nope/request-pairing-code'],
    ['GET', '/api/sessions/nope/qr-code']
  ]
  for (const [method, url, body] of routes) {
    const res = await api({ method: method as 'GET', url, ...(body !== undefined ? { headers: json, payload: JSON.stringify(body) } : {}) })
    assert.equal(res.statusCode, 404, `${method} ${url}`)
    assert.deepEqual(res.json(), { success: false, error: 'Session not found' })
  }
  const bad = await api({ method: 'GET', url: `/api/sessions/${'x'.repeat(65)}/connection-status` })
  assert.equal(bad.statusCode, 400)
})

test('sessions are created once, listed, and QR sessions refuse pairing codes', async (t) => {
  const { api } = await build(t)
  const created = await api({ method: 'POST', url: '/api/sessions', headers: json, payload: JSON.stringify({ sessionId: 'qr-1', sessionName: ' QR one ', authMethod: 'qrcode' }) })
  assert.equal(created.statusCode, 200)
  assert.deepEqual({ ...created.json().data, message: undefined }, { sessionId: 'qr-1', sessionName: 'QR one', phoneNumber: null, authMethod: 'qrcode', message: undefined })
  const dup = await api({ method: 'POST', url: '/api/sessions', headers: json, payload: JSON.stringify({ sessionId: 'qr-1', sessionName: 'again', authMethod: 'qrcode' }) })
  assert.equal(dup.statusCode, 409)
  assert.deepEqual(dup.json(), { success: false, error: 'Session already exists' })

  const pairing = await api({ method: 'POST', url: '/api/sessions', headers: json, payload: JSON.stringify({ sessionId: 'p_1', sessionName: 'Pairing', phoneNumber: '15551234567' }) })
  assert.equal(pairing.statusCode, 200)
  assert.equal(pairing.json().data.authMethod, 'pairing')

  const list = (await api({ method: 'GET', url: '/api/sessions' })).json().data as Array<Record<string, unknown>>
  assert.deepEqual(list.map((s) => [s.sessionId, s.authMethod, s.phoneNumber, s.connected, s.ownNumber]), [
    ['qr-1', 'qrcode', null, false, null],
    ['p_1', 'pairing', '15551234567', false, null]
  ])
  for (const s of list) assert.ok(!Number.isNaN(Date.parse(String(s.createdAt))))

  const code = await api({ method: 'POST', url: '/api/sessions/qr-1/request-pairing-code' })
  assert.equal(code.statusCode, 400)
  assert.deepEqual(code.json(), { success: false, error: 'Phone number not set for this session' })
  const qrOnPairing = await api({ method: 'GET', url: '/api/sessions/p_1/qr-code' })
  assert.equal(qrOnPairing.statusCode, 400)
  const phoneOnQr = await api({ method: 'PUT', url: '/api/sessions/qr-1/phone-number', headers: json, payload: JSON.stringify({ phoneNumber: '15551234567' }) })
  assert.equal(phoneOnQr.statusCode, 400)
  const badPhone = await api({ method: 'PUT', url: '/api/sessions/p_1/phone-number', headers: json, payload: JSON.stringify({ phoneNumber: '12' }) })
  assert.equal(badPhone.statusCode, 400)
  const newPhone = await api({ method: 'PUT', url: '/api/sessions/p_1/phone-number', headers: json, payload: JSON.stringify({ phoneNumber: '447700900123' }) })
  assert.equal(newPhone.statusCode, 200)
  assert.equal(newPhone.json().data.phoneNumber, '447700900123')
  const status = (await api({ method: 'GET', url: '/api/sessions/p_1/connection-status' })).json().data
  assert.equal(status.phoneNumber, '447700900123')
  assert.equal(status.connected, false)

  const del = await api({ method: 'DELETE', url: '/api/sessions/qr-1' })
  assert.equal(del.statusCode, 200)
  assert.equal(del.json().data.sessionId, 'qr-1')
  assert.equal((await api({ method: 'GET', url: '/api/sessions/qr-1/connection-status' })).statusCode, 404)
})
