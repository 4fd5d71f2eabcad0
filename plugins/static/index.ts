import { join } from 'node:path'
import fp from 'fastify-plugin'
import fastifyStatic from '@fastify/static'
import type { RouteOptions } from 'fastify'
import { PACKAGE_ROOT } from '../../src/paths.js'

/** The dashboard's folder: plain files, no build step (the same folder from src/ and from the build in dist/). */
export const PUBLIC_DIR = join(PACKAGE_ROOT, 'public')

// The page loads only its own files and the socket.io client served at /socket.io/; QR codes are
// data: URLs. No inline script or style, so injected markup could not run even if some slipped through.
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join('; ')

/**
 * Serves the dashboard (public/) at `/`. The files are public; every API call they make needs the key.
 * One route per file (no wildcard), so unknown paths, /api/* included, still reach the app's JSON 404
 * handler, and /docs and /socket.io/ are untouched.
 */
export default fp(async (app) => {
  // the dashboard's files are public (keys/route-scope.ts): every route @fastify/static adds says so (a
  // context of its own: the hook must not mark the routes registered after this plugin)
  await app.register(async (files) => {
    files.addHook('onRoute', markPublic)
    await files.register(fastifyStatic, {
      root: PUBLIC_DIR,
      prefix: '/',
      wildcard: false,
      index: ['index.html'],
      // swagger-ui registers its own copy of @fastify/static; nothing here needs reply.sendFile
      decorateReply: false,
      serveDotFiles: false,
      // small files that change with every release: always revalidate (ETag) instead of caching blind
      cacheControl: false,
      setHeaders: (res) => {
        res.setHeader('cache-control', 'no-cache')
        res.setHeader('content-security-policy', CONTENT_SECURITY_POLICY)
        res.setHeader('x-content-type-options', 'nosniff')
        res.setHeader('referrer-policy', 'no-referrer')
      }
    })
  })
}, { name: 'static' })

/** An onRoute hook for a third-party plugin's routes, which cannot declare it themselves: served without a key. */
export function markPublic (route: RouteOptions): void {
  route.config = { ...route.config, public: true }
}
