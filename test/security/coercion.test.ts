import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build } from '../helper.js'

// Issue 12, point 9: JSON bodies are not coerced: a value of the wrong type is a 400 naming the field,
// as the OpenAPI document says. Query strings (always text) are still converted.

test('coercion: wrong JSON types in bodies answer 400 naming the field', async (t) => {
  const { api } = await build(t)
  const created = await api({ method: 'POST', url: '/api/sessions', payload: { sessionId: 's1', sessionName: 'One', authMethod: 'qrcode' } })
  assert.equal(created.statusCode, 200, created.body)
  const cases: Array<{ url: string, method: 'POST' | 'PUT', payload: Record<string, unknown>, field: string }> = [
    { method: 'POST', url: '/api/sessions/s1/send-status', payload: { type: 'text', content: 'hi', targetNumbers: ['4915100000011'] }, field: 'targetNumbers' },
    { method: 'POST', url: '/api/sessions/s1/send-status', payload: { type: 'text', content: 'hi', font: '3' }, field: 'font' },
    { method: 'POST', url: '/api/sessions/s1/send-status', payload: { type: 'text', content: 123 }, field: 'content' },
    { method: 'POST', url: '/api/sessions/s1/send-status', payload: { type: 'text', content: 'hi', caption: false }, field: 'caption' },
    { method: 'POST', url: '/api/sessions', payload: { sessionId: 123456, sessionName: 'x', authMethod: 'qrcode' }, field: 'sessionId' },
    { method: 'POST', url: '/api/sessions', payload: { sessionId: 's2', sessionName: ['x'], authMethod: 'qrcode' }, field: 'sessionName' },
    { method: 'POST', url: '/api/sessions', payload: { sessionId: 's3', sessionName: 'x', phoneNumber: 4915100000011 }, field: 'phoneNumber' },
    { method: 'PUT', url: '/api/sessions/s1/phone-number', payload: { phoneNumber: 4915100000011 }, field: 'phoneNumber' }
  ]
  for (const c of cases) {
    const res = await api({ method: c.method, url: c.url, payload: c.payload })
    assert.equal(res.statusCode, 400, `${JSON.stringify(c.payload)} → ${res.statusCode} ${res.body}`)
    const body = res.json<{ success: boolean, error: string }>()
    assert.equal(body.success, false)
    assert.match(body.error, new RegExp(`body\\.${c.field}\\b`), body.error)
  }
})

test('coercion: query strings are still converted (revoke=true)', async (t) => {
  const { api } = await build(t)
  await api({ method: 'POST', url: '/api/sessions', payload: { sessionId: 's1', sessionName: 'One', authMethod: 'qrcode' } })
  const res = await api({ method: 'DELETE', url: '/api/sessions/s1/delete-status/1?revoke=true' })
  assert.equal(res.statusCode, 404, res.body)
  assert.equal(res.json<{ error: string }>().error, 'Status not found')
  const bad = await api({ method: 'DELETE', url: '/api/sessions/s1/delete-status/1?revoke=maybe' })
  assert.equal(bad.statusCode, 400, bad.body)
})
