import type { IncomingMessage, ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import fastifyHelmet, { type FastifyHelmetOptions } from '@fastify/helmet'
import helmet, { type HelmetOptions } from 'helmet'
import { CONTENT_SECURITY_POLICY } from './static.js'

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

export default fp(async (app) => {
  // @fastify/helmet bundles its own copy of helmet's types: the same options, spelled by the other package
  await app.register(fastifyHelmet, { global: true, ...(HELMET_OPTIONS as unknown as FastifyHelmetOptions) })
}, { name: 'helmet' })
