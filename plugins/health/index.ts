import { performance } from 'node:perf_hooks'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { SystemStore } from '../../src/db/stores/system.js'
import { clientExpiryView, warnDaily } from './client-expiry.js'

/** One check's answer: whether it is fine, and the fields `/api/health` shows under `checks.<name>`. */
export interface HealthCheckResult {
  healthy: boolean
  details: Record<string, unknown>
}
export type HealthCheck = () => Promise<HealthCheckResult>

export interface HealthReport {
  healthy: boolean
  checks: Record<string, Record<string, unknown>>
}

/** A check that takes longer than this counts as failed, so a stuck dependency cannot hang the health route. */
export const CHECK_TIMEOUT_MS = 2000

/**
 * Named checks run by `/api/health`, in the order registered, every one on every request. A check that
 * throws or times out shows `{ error }` and makes the service degraded. A new check's fields must be added
 * to HealthSchema too (schemas/system.ts), or the serializer drops them.
 */
export function createHealth () {
  const checks = new Map<string, HealthCheck>()

  async function runOne (check: HealthCheck): Promise<HealthCheckResult> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<HealthCheckResult>((resolve) => {
      timer = setTimeout(() => { resolve({ healthy: false, details: { error: `timed out after ${CHECK_TIMEOUT_MS} ms` } }) }, CHECK_TIMEOUT_MS)
    })
    try {
      return await Promise.race([check(), timeout])
    } catch (err) {
      return failed(err)
    } finally {
      clearTimeout(timer)
    }
  }

  return {
    register (name: string, check: HealthCheck): void {
      if (checks.has(name)) throw new Error(`health check ${name} is already registered`)
      checks.set(name, check)
    },
    has: (name: string): boolean => checks.has(name),
    /** every check's answer */
    async run (): Promise<HealthReport> {
      const entries = [...checks]
      const results = await Promise.all(entries.map(async ([, check]) => await runOne(check)))
      return {
        healthy: results.every((r) => r.healthy),
        checks: Object.fromEntries(entries.map(([name], i) => [name, results[i].details]))
      }
    }
  }
}

export type Health = ReturnType<typeof createHealth>

declare module 'fastify' {
  interface FastifyInstance {
    /** the checks behind /api/health; other plugins add theirs with `health.register(name, check)` */
    health: Health
  }
}

const failed = (err: unknown): HealthCheckResult => ({ healthy: false, details: { error: err instanceof Error ? err.message : String(err) } })

/** The database answers a real query (`ping`, by default the system store's round trip). */
export function databaseCheck (ping: () => Promise<void>): HealthCheck {
  return async () => {
    const started = performance.now()
    const latencyMs = (): number => Math.round((performance.now() - started) * 1000) / 1000
    try {
      await ping()
      return { healthy: true, details: { ok: true, latencyMs: latencyMs() } }
    } catch (err) {
      return { healthy: false, details: { ok: false, latencyMs: latencyMs(), error: err instanceof Error ? err.message : String(err) } }
    }
  }
}

/**
 * Sessions by connection state. Degraded when a linked session (one that has an account; logged-out and
 * never-linked ones do not count) has not been connected for longer than `disconnectedMs`.
 */
export function sessionsCheck (
  app: Pick<FastifyInstance, 'platform'> & { cluster?: Pick<FastifyInstance['cluster'], 'reported'> },
  disconnectedMs: number,
  readSessions: SystemStore['sessionLinkStates']
): HealthCheck {
  const startedAt = Date.now()
  /** when each session was last seen leaving `open` (absent: open, or not seen since start) */
  const downSince = new Map<string, number>()
  app.platform.on('connection-status', ({ sessionId, status }) => {
    if (status === 'open') downSince.delete(sessionId)
    else if (!downSince.has(sessionId)) downSince.set(sessionId, Date.now())
  })

  const count = (rows: SessionLinkState[], reported: Map<string, string | null>): HealthCheckResult => {
    const now = Date.now()
    const counts = { total: rows.length, connected: 0, connecting: 0, disconnected: 0, loggedOut: 0 }
    const disconnectedTooLong: string[] = []
    const present = new Set<string>()
    for (const { id, linked } of rows) {
      present.add(id)
      const status = app.platform.snapshot(id)?.status ?? reported.get(id) ?? 'close'
      if (status === 'open') counts.connected++
      else if (status === 'connecting') counts.connecting++
      else if (status === 'logged-out') counts.loggedOut++
      else counts.disconnected++
      if (linked && status !== 'open' && now - (downSince.get(id) ?? startedAt) > disconnectedMs) disconnectedTooLong.push(id)
    }
    for (const id of downSince.keys()) if (!present.has(id)) downSince.delete(id)
    return { healthy: disconnectedTooLong.length === 0, details: { ...counts, disconnectedTooLong } }
  }
  const none = new Map<string, string | null>()
  // for the sessions on other nodes, the status their owner last reported (none on one node)
  return async () => count(await readSessions(), await app.cluster?.reported() ?? none)
}

/**
 * The start-up check of the Baileys internals the service relies on (src/platform/baileys/assumptions.ts,
 * UPGRADING.md): degraded when one does not hold, since then no session starts. Before the platform has
 * loaded (it loads right after the server listens) there is nothing to tell yet.
 */
export function platformCheck (platform: Pick<FastifyInstance['platform'], 'compatibility' | 'clientExpiration'>, clientExpiryWarnMs: number): HealthCheck {
  return async () => {
    const found = platform.compatibility()
    // the date the platform stops accepting this client build, degraded from CLIENT_EXPIRY_WARN_DAYS before (client-expiry.ts)
    const expiry = clientExpiryView(platform, clientExpiryWarnMs)
    if (found === null) return { healthy: true, details: { loaded: false, ...expiry } }
    const { baileys, compatible, assumptions, broken } = found
    return { healthy: compatible && !expiry.clientExpiresSoon, details: { loaded: true, baileys, compatible, assumptions, broken, ...expiry } }
  }
}

type SessionLinkState = { id: string, linked: boolean }

export default fp(async (app) => {
  const health = createHealth()
  const { system } = app.stores
  health.register('database', databaseCheck(system.ping))
  health.register('sessions', sessionsCheck(app, app.config.healthDisconnectedMs, system.sessionLinkStates))
  health.register('platform', platformCheck(app.platform, app.config.clientExpiryWarnMs))
  app.decorate('health', health)
  const stopWarning = warnDaily(app, app.config.clientExpiryWarnMs)
  app.addHook('onClose', async () => { stopWarning() })
}, { name: 'health', dependencies: ['config', 'db', 'platform', 'cluster'] })
