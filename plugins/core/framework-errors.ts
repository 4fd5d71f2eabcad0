import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { staticSecurityHeaders } from '../helmet/index.js'
import { REQUEST_ID_HEADER } from '../request-id/index.js'

// Fastify answers some requests before any route, hook or error handler runs: the router's own errors
// (`frameworkErrors`) and Node's HTTP parser errors (`clientErrorHandler`). Both answer in the envelope
// here, with the security headers, and never echo the request back.

const ROUTER_MESSAGES: Record<string, [number, string]> = {
  FST_ERR_BAD_URL: [400, 'Invalid URL: a path segment is not valid percent-encoding'],
  // not reached while maxParamLength (src/app.ts) is above Node's largest request head; a 400 like the schemas' if it is
  FST_ERR_MAX_PARAM_LENGTH: [400, 'A path parameter is too long']
}

/** Fastify's `frameworkErrors` option. */
export function frameworkErrors (err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const [status, message] = ROUTER_MESSAGES[err.code] ?? [500, 'Internal server error']
  if (status >= 500) req.log.error({ err }, 'unexpected framework error')
  else req.log.info({ code: err.code, statusCode: status }, message)
  void reply.code(status).headers({ ...staticSecurityHeaders(), [REQUEST_ID_HEADER]: req.id }).send({ success: false, error: message })
}

/** Fastify's `clientErrorHandler` option: requests Node's HTTP parser refused. */
export function clientErrorHandler (err: NodeJS.ErrnoException, socket: Socket): void {
  // a reset connection: nobody to answer
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  let status = 400
  let message = 'Malformed HTTP request'
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') { status = 408; message = 'Request timed out' }
  if (err.code === 'HPE_HEADER_OVERFLOW') { status = 431; message = 'Request headers too large' }
  if (socket.writable) {
    const body = JSON.stringify({ success: false, error: message })
    const headers = { ...staticSecurityHeaders(), 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), connection: 'close' }
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n${body}`)
  }
  socket.destroy()
}
