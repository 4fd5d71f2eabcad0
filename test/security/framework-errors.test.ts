import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { test } from 'node:test'
import type { InjectOptions } from 'fastify'
import { build, TEST_API_KEY } from '../helper.js'

// Issue 12, point 5: whatever Fastify (or Node's HTTP parser under it) raises for a request, the answer
// is the envelope `{ success: false, error }` with a 4xx status. Each case names the FST_ERR_* code (or
// the parser error) it provokes.

interface Answer { status: number, body: string }

function assertEnvelope (what: string, answer: Answer, status: number): void {
  assert.equal(answer.status, status, `${what}: ${answer.status} ${answer.body}`)
  let body: unknown
  try { body = JSON.parse(answer.body) } catch { assert.fail(`${what}: not JSON: ${answer.body}`) }
  assert.deepEqual(Object.keys(body as object).sort(), ['error', 'success'], `${what}: ${answer.body}`)
  const { success, error } = body as { success: unknown, error: unknown }
  assert.equal(success, false, what)
  assert.equal(typeof error, 'string', what)
  assert.ok((error as string).length > 0, what)
  assert.doesNotMatch(error as string, /FST_ERR|HPE_/, `${what}: internal codes stay out of the message`)
}

/** Sends raw bytes and reads the whole answer (the server closes the connection after a parser error). */
async function raw (base: string, request: string | Buffer): Promise<Answer> {
  const { hostname, port } = new URL(base)
  return await new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    const chunks: Buffer[] = []
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('error', reject)
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1')
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0)
      resolve({ status, body: text.slice(text.indexOf('\r\n\r\n') + 4) })
    })
    socket.setTimeout(5000, () => socket.destroy())
    socket.end(request)
  })
}

test('framework errors: every FST_ERR_* a request can raise answers in the envelope', async (t) => {
  const { app, listen } = await build(t)
  const key = { 'x-api-key': TEST_API_KEY }
  const json = { ...key, 'content-type': 'application/json' }
  const inject = async (opts: InjectOptions): Promise<Answer> => {
    const res = await app.inject(opts)
    return { status: res.statusCode, body: res.body }
  }

  // FST_ERR_MAX_PARAM_LENGTH no more (issue 41): the router takes a path parameter of any length a request
  // head may carry, and the route's schema answers 400 naming it (the key is still checked first)
  const long = await inject({ url: `/api/sessions/${'a'.repeat(101)}/pairing-code`, headers: key })
  assertEnvelope('long path parameter', long, 400)
  assert.match(long.body, /params\.sessionId/)
  assertEnvelope('long path parameter without key', await inject({ url: `/api/sessions/${'a'.repeat(300)}/qr-code` }), 401)
  // FST_ERR_BAD_URL: a path parameter that is not valid percent-encoding
  assertEnvelope('FST_ERR_BAD_URL', await inject({ url: '/api/sessions/%E0%A4%A/pairing-code', headers: key }), 400)
  // FST_ERR_CTP_INVALID_MEDIA_TYPE: a body in a content type nobody parses
  assertEnvelope('FST_ERR_CTP_INVALID_MEDIA_TYPE', await inject({ method: 'POST', url: '/api/sessions', headers: { ...key, 'content-type': 'application/xml' }, payload: 'x' }), 415)
  // FST_ERR_CTP_BODY_TOO_LARGE: JSON over bodyLimit (2 MiB)
  assertEnvelope('FST_ERR_CTP_BODY_TOO_LARGE', await inject({ method: 'POST', url: '/api/sessions', headers: json, payload: JSON.stringify({ sessionId: 'x', sessionName: 'x'.repeat(3 * 1024 * 1024) }) }), 413)
  // FST_ERR_CTP_EMPTY_JSON_BODY
  assertEnvelope('FST_ERR_CTP_EMPTY_JSON_BODY', await inject({ method: 'POST', url: '/api/sessions', headers: json, payload: '' }), 400)
  // FST_ERR_CTP_INVALID_JSON_BODY
  assertEnvelope('FST_ERR_CTP_INVALID_JSON_BODY', await inject({ method: 'POST', url: '/api/sessions', headers: json, payload: '{"sessionId": ' }), 400)
  // prototype poisoning (secure-json-parse inside Fastify's JSON parser)
  assertEnvelope('__proto__ in JSON', await inject({ method: 'POST', url: '/api/sessions', headers: json, payload: '{"__proto__":{"x":1},"sessionId":"a","sessionName":"b"}' }), 400)
  assertEnvelope('constructor.prototype in JSON', await inject({ method: 'POST', url: '/api/sessions', headers: json, payload: '{"constructor":{"prototype":{"x":1}},"sessionId":"a","sessionName":"b"}' }), 400)
  // FST_ERR_VALIDATION: params, body and querystring
  assertEnvelope('FST_ERR_VALIDATION params', await inject({ url: '/api/sessions/bad.id/qr-code', headers: key }), 400)
  assertEnvelope('FST_ERR_VALIDATION body', await inject({ method: 'POST', url: '/api/sessions', headers: json, payload: '[]' }), 400)
  assertEnvelope('FST_ERR_VALIDATION querystring', await inject({ method: 'DELETE', url: '/api/sessions/a/delete-status/1?revoke=perhaps', headers: key }), 400)
  // FST_ERR_NOT_FOUND (unknown route, unknown method on a known path)
  assertEnvelope('FST_ERR_NOT_FOUND', await inject({ url: '/api/nothing-here', headers: key }), 404)
  assertEnvelope('FST_ERR_NOT_FOUND method', await inject({ method: 'PATCH', url: '/api/health', headers: key }), 404)
  // FST_ERR_CTP_INVALID_CONTENT_LENGTH: fewer bytes than Content-Length announces
  assertEnvelope('FST_ERR_CTP_INVALID_CONTENT_LENGTH', await inject({ method: 'POST', url: '/api/sessions', headers: { ...json, 'content-length': '50' }, payload: '{}' }), 400)
  // multipart errors from @fastify/multipart (FST_INVALID_MULTIPART_CONTENT_TYPE)
  const upload = await inject({ method: 'POST', url: '/api/upload-image', headers: json, payload: '{}' })
  assert.ok(upload.status >= 400 && upload.status < 500, upload.body)
  assertEnvelope('multipart content type', upload, upload.status)
  // multipart is parsed only by the upload routes (plugins/uploads/routes.ts): elsewhere it is an unsupported type
  const form = { 'x-api-key': TEST_API_KEY, 'content-type': 'multipart/form-data; boundary=b' }
  assertEnvelope('multipart body to a JSON route (FST_ERR_CTP_INVALID_MEDIA_TYPE)', await inject({ method: 'POST', url: '/api/sessions', headers: form, payload: '--b\r\ncontent-disposition: form-data; name="sessionId"\r\n\r\nx\r\n--b--\r\n' }), 415)

  // Errors raised below the router, on a real connection.
  const base = await listen()
  const mismatch = await raw(base, `POST /api/sessions HTTP/1.1\r\nhost: x\r\nx-api-key: ${TEST_API_KEY}\r\ncontent-type: application/json\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`)
  assertEnvelope('content-length with transfer-encoding (HPE_UNEXPECTED_CONTENT_LENGTH / clientError)', mismatch, 400)
  // Node's parser: a malformed request line, and headers over the limit (431)
  assertEnvelope('malformed request line (clientError)', await raw(base, 'GARBAGE\r\n\r\n'), 400)
  assertEnvelope('header overflow (HPE_HEADER_OVERFLOW)', await raw(base, `GET /api/health HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`), 431)
})
