import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import fp from 'fastify-plugin'

export const REQUEST_ID_HEADER = 'x-request-id'
/** What a caller's own request id may look like to be reused: short, no spaces, nothing a log parser could trip on. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * Fastify's `genReqId`: the caller's `x-request-id` when it is sane, a random UUID otherwise. It becomes
 * `req.id`, the `reqId` of every log line about the request, and the `x-request-id` of the answer.
 */
export function genReqId (req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER]
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID()
}

/** Echoes the request id on every answer: set first thing, so 401, 404, 429 and errors carry it too. */
export default fp(async (app) => {
  app.addHook('onRequest', (req, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, req.id)
    done()
  })
}, { name: 'request-id' })
