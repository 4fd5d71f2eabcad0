import type { IncomingMessage, ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import helmet, { type HelmetOptions } from 'helmet'
import { CONTENT_SECURITY_POLICY } from '../static/index.js'

// Security headers on every response. Every response gets the dashboard's own strict policy (its pages
// load only their own files, no inline code); swagger-ui at /docs replaces it on its pages with the same
// policy plus inline styles, which it injects (staticCSP in swagger.ts).

const directives = Object.fromEntries(CONTENT_SECURITY_POLICY.split(';').map((d) => {
  const [name, ...values] = d.trim().split(/\s+/)
  return [name, values]
}))

export const HELMET_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives },
  // the dashboard is not framed anywhere (frame-ancestors 'none' says the same to newer browsers)
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' }
}

/** The headers helmet sets, for answers written before any hook runs (framework and client errors). */
export function staticSecurityHeaders (): Record<string, string> {
  const headers: Record<string, string> = {}
  const res = {
    setHeader: (name: string, value: string) => { headers[name.toLowerCase()] = String(value) },
    removeHeader: (name: string) => { delete headers[name.toLowerCase()] }
  }
  helmet(HELMET_OPTIONS)({} as IncomingMessage, res as unknown as ServerResponse, () => {})
  return headers
}

/**
 * Every answer gets helmet's headers. With these options they are the same for every request (no
 * nonces), so helmet runs once here and each request copies the result, instead of running helmet's
 * middleware (a dozen header writes on the raw response) per request as @fastify/helmet did. A route
 * may still set its own policy later (swagger-ui's pages do, in onSend).
 */
export default fp(async (app) => {
  const headers = staticSecurityHeaders()
  app.addHook('onRequest', (_req, reply, done) => {
    void reply.headers(headers)
    done()
  })
}, { name: 'helmet' })
