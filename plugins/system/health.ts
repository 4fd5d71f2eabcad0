import { performance } from 'node:perf_hooks'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { lightChangeStamp, ping as pingAsync, pingStatement, sessionLinkStates, sessionLinkStatesStatement } from '../../src/db/repositories/system.js'

/** One check's answer: whether it is fine, and the fields `/api/health` shows under `checks.<name>`. */
export interface HealthCheckResult {
  healthy: boolean
  details: Record<string, unknown>
}
export type HealthCheck = () => HealthCheckResult | Promise<HealthCheckResult>

export interface HealthReport {
  healthy: boolean
  checks: Record<string, Record<string, unknown>>
}

/** A check that takes longer than this counts as failed, so a stuck dependency cannot hang the health route. */
export const CHECK_TIMEOUT_MS = 2000
/**
 * How long a snapshot of the checks may serve (`current`) when none of its inputs moved: what no input
 * announces (the platform loading, a session crossing HEALTH_DISCONNECTED_MS, the database's latency)
 * shows within this.
 */
export const SNAPSHOT_MAX_AGE_MS = 100

/**
 * Named checks run by `/api/health`, in the order registered. A check that throws or times out shows
 * `{ error }` and makes the service degraded. A new check's fields must be added to HealthSchema too
 * (schemas/system.ts), or the serializer drops them.
 */
export function createHealth (stamp?: () => string, maxAgeMs = SNAPSHOT_MAX_AGE_MS) {
  const checks = new Map<string, HealthCheck>()
  /** moves with every input of the checks other than the database and time: a check registered, `invalidate()` */
  let version = 0
  let snapshot: { report: HealthReport, stamp: string, version: number, until: number } | undefined
  // one change stamp per run of the checks, shared by every reader below (read when first needed)
  let runStamp: string | undefined
  const currentStamp = (): string => {
    if (stamp === undefined) throw new Error('this health registry has no change stamp')
    runStamp ??= stamp()
    return runStamp
  }

  /** A synchronous check (all of the service's own) answers at once; only a promise gets the timeout race. */
  function runOne (check: HealthCheck): HealthCheckResult | Promise<HealthCheckResult> {
    let result: HealthCheckResult | Promise<HealthCheckResult>
    try {
      result = check()
    } catch (err) {
      return failed(err)
    }
    return result instanceof Promise ? withTimeout(result) : result
  }

  async function withTimeout (result: Promise<HealthCheckResult>): Promise<HealthCheckResult> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<HealthCheckResult>((resolve) => {
      timer = setTimeout(() => { resolve({ healthy: false, details: { error: `timed out after ${CHECK_TIMEOUT_MS} ms` } }) }, CHECK_TIMEOUT_MS)
    })
    try {
      return await Promise.race([result, timeout])
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
      version++
    },
    /** An input of a check moved that the database's change stamp does not show (a session's connection state). */
    invalidate (): void { version++ },
    has: (name: string): boolean => checks.has(name),
    /** The database's change stamp, read once per run of the checks (the database check's query: see the plugin). */
    stamp: currentStamp,
    /**
     * `read` (a synchronous database read of a check) again only when the database changed since its last
     * answer: the same answers as reading every time, for one query per run of the checks (SQLite's change
     * counter, as the sent-statuses cache uses) instead of one per reader. Without a stamp: `read` itself.
     */
    whileUnchanged<T> (read: () => T): () => T {
      if (stamp === undefined) return read
      let last: { stamp: string, value: T } | undefined
      return () => {
        const now = currentStamp()
        if (last === undefined || last.stamp !== now) last = { stamp: now, value: read() }
        return last.value
      }
    },
    /**
     * The checks' answer as of the last change of their inputs: with a change stamp, the same report
     * object while the stamp (one database read per call: the service's own writes show at once, another
     * process's within 250 ms), `invalidate()` and the last `maxAgeMs` hold; otherwise, and whenever the
     * stamp cannot be read (the database check then runs and says why), a fresh `run()`.
     */
    current (): HealthReport | Promise<HealthReport> {
      if (stamp === undefined) return run()
      let now: string
      try { now = stamp() } catch { snapshot = undefined; return run() }
      const at = performance.now()
      if (snapshot !== undefined && snapshot.stamp === now && snapshot.version === version && at < snapshot.until) return snapshot.report
      const inputs = { stamp: now, version, until: at + maxAgeMs }
      const report = run(now)
      if (report instanceof Promise) { snapshot = undefined; return report }
      snapshot = { report, ...inputs }
      return report
    },
    run: (): HealthReport | Promise<HealthReport> => run()
  }

  /** Every check's answer; at once (no promise) when every check answered synchronously, as the service's own do. */
  function run (stampNow?: string): HealthReport | Promise<HealthReport> {
    const entries = [...checks]
    runStamp = stampNow
    const answers = entries.map(([, check]) => runOne(check))
    runStamp = undefined
    const report = (results: HealthCheckResult[]): HealthReport => ({
      healthy: results.every((r) => r.healthy),
      checks: Object.fromEntries(entries.map(([name], i) => [name, results[i].details]))
    })
    return answers.some((a) => a instanceof Promise) ? Promise.all(answers).then(report) : report(answers as HealthCheckResult[])
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

/**
 * The database answers a real query: on SQLite a prepared statement on the connection (synchronous, as
 * every query of better-sqlite3), on PostgreSQL a round trip; `ping` is the query, by default `select 1`.
 */
export function databaseCheck (handle: FastifyInstance['db'], ping: () => unknown = handle.dialect === 'sqlite' ? pingStatement(handle.sqlite) : async () => { await pingAsync(handle.db) }): HealthCheck {
  return () => {
    const started = performance.now()
    const latencyMs = () => Math.round((performance.now() - started) * 1000) / 1000
    const ok = (): HealthCheckResult => ({ healthy: true, details: { ok: true, latencyMs: latencyMs() } })
    const bad = (err: unknown): HealthCheckResult =>
      ({ healthy: false, details: { ok: false, latencyMs: latencyMs(), error: err instanceof Error ? err.message : String(err) } })
    try {
      const done = ping()
      return done instanceof Promise ? done.then(ok, bad) : ok()
    } catch (err) {
      return bad(err)
    }
  }
}

/**
 * Sessions by connection state. Degraded when a linked session (one that has an account; logged-out and
 * never-linked ones do not count) has not been connected for longer than `disconnectedMs`.
 */
export function sessionsCheck (
  app: Pick<FastifyInstance, 'db' | 'platform'> & { cluster?: Pick<FastifyInstance['cluster'], 'reported'> },
  disconnectedMs: number,
  readSessions: () => SessionLinkState[] | Promise<SessionLinkState[]> = defaultSessionReader(app.db)
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
  // SQLite (always one node): synchronous; PostgreSQL reads the sessions and, for the sessions on other
  // nodes, the status their owner last reported (none on one node)
  return () => {
    const rows = readSessions()
    if (!(rows instanceof Promise)) return count(rows, none)
    return (async () => count(await rows, await app.cluster?.reported() ?? none))()
  }
}

/**
 * The start-up check of the Baileys internals the service relies on (src/platform/baileys/assumptions.ts,
 * UPGRADING.md): degraded when one does not hold, since then no session starts. Before the platform has
 * loaded (it loads right after the server listens) there is nothing to tell yet.
 */
export function platformCheck (platform: Pick<FastifyInstance['platform'], 'compatibility'>): HealthCheck {
  return () => {
    const found = platform.compatibility()
    if (found === null) return { healthy: true, details: { loaded: false } }
    const { baileys, compatible, assumptions, broken } = found
    return { healthy: compatible, details: { loaded: true, baileys, compatible, assumptions, broken } }
  }
}

type SessionLinkState = { id: string, linked: boolean }

function defaultSessionReader (handle: FastifyInstance['db']): () => SessionLinkState[] | Promise<SessionLinkState[]> {
  return handle.dialect === 'sqlite' ? sessionLinkStatesStatement(handle.sqlite) : async () => await sessionLinkStates(handle.db)
}

export default fp(async (app) => {
  if (app.db.dialect !== 'sqlite' || app.config.speedTricksOff.has('health-snapshot')) {
    // PostgreSQL: every check is a round trip, no change stamp to cache by; and the plain path of the
    // health-snapshot speed trick (src/speed-tricks.ts): every request runs every check and its reads
    const health = createHealth()
    health.register('database', databaseCheck(app.db))
    health.register('sessions', sessionsCheck(app, app.config.healthDisconnectedMs))
    health.register('platform', platformCheck(app.platform))
    app.decorate('health', health)
    return
  }
  // the service's own writes are seen at once, another process's within 250 ms (lightChangeStamp): a
  // read of the database per request cost more than the rest of the check on this VM (bench/NOTES.md)
  const health = createHealth(lightChangeStamp(app.db.sqlite))
  // the snapshot (`current`) is taken again once a session's connection state moves
  app.platform.on('connection-status', () => { health.invalidate() })
  health.register('database', databaseCheck(app.db))
  health.register('sessions', sessionsCheck(app, app.config.healthDisconnectedMs, health.whileUnchanged(sessionLinkStatesStatement(app.db.sqlite))))
  health.register('platform', platformCheck(app.platform))
  app.decorate('health', health)
}, { name: 'health', dependencies: ['config', 'db', 'platform', 'cluster'] })
