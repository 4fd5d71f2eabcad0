import type { Scope } from '../../schemas/keys.js'

/** What a route needs: a scope, the admin key, or any valid key. */
export type RouteScope = Scope | 'admin' | 'any'

/**
 * Writes that publish or remove statuses (and the media they carry): the `send` scope. Saved audiences and
 * schedules are the session's settings: read with `read`, changed with `manage` (the default below); a
 * `send` key posts to a saved audience (send-status `audience`) without being able to change it.
 */
const SEND_ROUTES = new Set([
  'POST /sessions/:sessionId/send-status',
  // tells a contact the account viewed their status: something sent on the account's behalf, as a post is
  'POST /sessions/:sessionId/contact-statuses/:statusId/view',
  'DELETE /sessions/:sessionId/delete-status/:statusId',
  'POST /upload-image',
  'POST /upload-video'
])

/** Reads that span every session or the whole server: the admin key. */
const ADMIN_ROUTES = new Set(['GET /storage', 'GET /cluster'])

/**
 * The scope an /api route needs, from its method and path (relative to /api): GET reads need `read`, the
 * writes above `send`, every other write `manage`; keys, storage and the cluster view need the admin key;
 * health and "who am I" any valid key. One table, so a route added later gets a safe default.
 */
export function scopeOf (method: string, url: string): RouteScope {
  const path = url.replace(/^\/api(?=\/|$)/, '')
  const m = method.toUpperCase()
  const key = `${m} ${path}`
  if (path === '/health' || key === 'GET /keys/me') return 'any'
  if (path === '/keys' || path.startsWith('/keys/') || ADMIN_ROUTES.has(key)) return 'admin'
  if (SEND_ROUTES.has(key)) return 'send'
  // every read needs `read`: the phone's saved contacts and status privacy (GET …/contacts, …/status-privacy) too
  if (m === 'GET' || m === 'HEAD') return 'read'
  return 'manage'
}

/** The line OpenAPI shows on each operation. */
export function scopeLine (scope: RouteScope): string {
  if (scope === 'admin') return 'Needs the admin key (API_KEY).'
  if (scope === 'any') return 'Any valid key (admin or scoped).'
  return `Needs scope \`${scope}\` (or the admin key); a scoped key sees only its sessions: another session answers 404.`
}
