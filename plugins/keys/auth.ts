import { hash, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import { Unauthorized } from '../../src/errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** constant-time comparison with the configured API key */
    checkApiKey: (candidate: string) => boolean
    /** throws Unauthorized unless the request carries the key; the /api scope runs it before parsing any body */
    requireApiKey: (req: FastifyRequest) => void
  }
}

export default fp(async (app) => {
  // Hash both sides so the comparison is constant-time whatever the lengths; the configured key's hash
  // once, here, and each candidate's with the one-shot `crypto.hash` (no Hash object per request).
  const expected = digest(app.config.apiKey)
  const checkApiKey = (candidate: string): boolean => timingSafeEqual(digest(candidate), expected)

  app.decorate('checkApiKey', checkApiKey)
  app.decorate('requireApiKey', (req: FastifyRequest) => {
    const key = apiKeyFrom(req.headers)
    if (key === undefined || !checkApiKey(key)) throw new Unauthorized()
  })
}, { name: 'auth', dependencies: ['config'] })

function digest (value: string): Buffer {
  return hash('sha256', value, 'buffer')
}

/** The API key a request's (or socket.io handshake's) headers carry: `x-api-key`, else `Authorization: Bearer`. */
export function apiKeyFrom (headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key']
  if (typeof header === 'string' && header !== '') return header
  const auth = headers.authorization
  const m = auth === undefined ? null : /^Bearer\s+(.+)$/i.exec(auth)
  return m === null ? undefined : m[1].trim()
}
