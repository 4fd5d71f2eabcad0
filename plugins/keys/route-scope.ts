import type { RouteOptions } from 'fastify'
import type { Scope } from '../../schemas/keys.js'

/** What a route needs: a scope, the admin key, or any valid key. */
export type RouteScope = Scope | 'admin' | 'any'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The key the route needs (plugins/keys): GET reads `read`; writes that publish or remove statuses (and
     * their media) `send`; every other write `manage`; keys, storage and the cluster view `admin`; health and
     * "who am I" `any`. A route declares either this or `public`, or the service refuses to start.
     */
    scope?: RouteScope
    /** served without a key: the dashboard's files, the API docs, /metrics (which checks the admin key itself) */
    public?: boolean
  }
}

const SCOPES: ReadonlySet<unknown> = new Set<RouteScope>(['read', 'send', 'manage', 'admin', 'any'])

/** Why a route's declared policy is not one the keys plugin can enforce, or null when it is. */
export function undeclaredPolicy (route: Pick<RouteOptions, 'method' | 'url' | 'config'>): string | null {
  const config = route.config as { scope?: unknown, public?: unknown } | undefined
  const name = `${String(route.method)} ${route.url}`
  if (config?.public === true) return config.scope === undefined ? null : `${name} is public and declares a scope`
  if (config?.scope === undefined) return `${name} declares no scope (config.scope) and is not public (config.public)`
  if (!SCOPES.has(config.scope)) return `${name} declares an unknown scope ${JSON.stringify(config.scope)}`
  return null
}

/** The line OpenAPI shows on each operation. */
export function scopeLine (scope: RouteScope): string {
  if (scope === 'admin') return 'Needs the admin key (API_KEY).'
  if (scope === 'any') return 'Any valid key (admin or scoped).'
  return `Needs scope \`${scope}\` (or the admin key); a scoped key sees only its sessions: another session answers 404.`
}
