import { performance, type EventLoopUtilization } from 'node:perf_hooks'

/**
 * A paced start: the sessions a node takes on (all of them at start, a dead node's share in a cluster)
 * reconnect a bounded number at a time. Each reconnect is a Noise handshake and a login, CPU work on both
 * ends; a thousand at once would starve the HTTP server and the machine and look like a storm to the
 * platform. A place is held from the start of a session's socket until its handshake is over (open,
 * failed, or waiting for a phone: `settled`), at most `settleMs`. The first handshakes of a start (those
 * begun while none was under way) each wait a random pause of up to `jitterMs`, so nodes starting together
 * (a cluster's failover) do not knock in step; the ones after follow the handshakes that end, spread by then.
 */
export interface PacerOptions {
  /** handshakes at once, for sessions added without a limit of their own (SESSION_START_CONCURRENCY) */
  concurrency: number
  /** longest random pause before each of a start's first handshakes (SESSION_START_JITTER_MS) */
  jitterMs: number
  /** a handshake still under way after this long gives its place to the next session (it goes on) */
  settleMs: number
  /** starts the session's socket */
  start: (sessionId: string) => Promise<void>
  /** resolves once the session's handshake is over, or after `timeoutMs` */
  settled: (sessionId: string, timeoutMs: number) => Promise<void>
  /** a start that failed (the next session gets the place) */
  onError: (err: unknown, sessionId: string) => void
  /** [0, 1), for the jitter; tests pass their own */
  random?: () => number
  /** a large start waits for the event loop between handshakes (see LoopBrake); none: no brake */
  brake?: LoopBrake
  /** the loop's utilisation since `from` (perf_hooks' eventLoopUtilization; tests pass their own) */
  utilization?: (from?: EventLoopUtilization) => EventLoopUtilization
}

/**
 * A node's own start (sessions added without a limit of their own): while at least `from` sessions wait,
 * a session's handshake begins only once the event loop was busy at most `busiest` (0–1) of the last
 * `windowMs`, looked at again every `windowMs`, for at most `maxMs`. A thousand reconnects kept the loop
 * busy from end to end (each login's frames, queries and writes), so every API request waited behind the
 * work of every session under way; with the brake each new one waits for the ones before it to quieten
 * ("GET /api/stats while 1,000 sessions open", bench/NOTES.md). A few sessions (fewer than `from`) start
 * without it, and so does a takeover (a failover's logins wait on the platform more than on the CPU).
 */
export interface LoopBrake { from: number, windowMs: number, busiest: number, maxMs: number }

/** Where a paced start stands: sessions waiting for a place, and handshakes under way. */
export interface PacerProgress { waiting: number, opening: number }

export function createPacer (o: PacerOptions) {
  const random = o.random ?? Math.random
  const utilization = o.utilization ?? ((from?: EventLoopUtilization) => performance.eventLoopUtilization(from))
  /**
   * in the order they were handed over (a Map keeps it), each with the handshakes at once it may join, and
   * whether it waits for the loop (LoopBrake)
   */
  const waiting = new Map<string, { limit: number, braked: boolean }>()
  /** holding a place: pausing, starting or handshaking */
  const opening = new Set<string>()
  /** starts under way, so a release can wait for the socket it must end */
  const starting = new Map<string, Promise<void>>()
  /** sessions given back while they held a place: their start is skipped if it has not begun */
  const dropped = new Set<string>()
  const pauses = new Set<{ timer: NodeJS.Timeout, resolve: () => void }>()
  const idleWaiters = new Set<() => void>()
  let closed = false

  const pause = async (ms: number): Promise<void> => {
    if (ms <= 0) return
    await new Promise<void>((resolve) => {
      const entry = { timer: setTimeout(() => { pauses.delete(entry); resolve() }, ms), resolve }
      pauses.add(entry)
    })
  }

  /** LoopBrake: waits while the loop is busy, if enough sessions wait behind this one */
  async function brake (): Promise<void> {
    const b = o.brake
    if (b === undefined || waiting.size < b.from) return
    const until = performance.now() + b.maxMs
    while (!closed) {
      const from = utilization()
      await pause(b.windowMs)
      if (utilization(from).utilization <= b.busiest || performance.now() >= until) return
    }
  }

  async function run (sessionId: string, jitter: boolean, braked: boolean): Promise<void> {
    if (jitter) await pause(Math.floor(random() * o.jitterMs))
    if (braked) await brake()
    if (closed || dropped.has(sessionId)) return
    const started = o.start(sessionId)
    starting.set(sessionId, started.catch(() => {}))
    try {
      await started
    } catch (err) {
      if (!closed) o.onError(err, sessionId)
      return
    } finally {
      starting.delete(sessionId)
    }
    if (!closed) await o.settled(sessionId, o.settleMs)
  }

  function pump (): void {
    // a start from idle: its first wave is spread
    const fromIdle = opening.size === 0
    while (!closed && waiting.size > 0) {
      const [sessionId, { limit, braked }] = waiting.entries().next().value as [string, { limit: number, braked: boolean }]
      if (opening.size >= limit) break
      waiting.delete(sessionId)
      opening.add(sessionId)
      void run(sessionId, fromIdle, braked).finally(() => {
        opening.delete(sessionId)
        dropped.delete(sessionId)
        pump()
      })
    }
    if (waiting.size === 0 && opening.size === 0) for (const done of [...idleWaiters]) done()
  }

  return {
    /**
     * Queues sessions to open, after those already waiting (one waiting or opening already is not queued twice).
     * `limit`: each starts once fewer than that many handshakes are under way (default: `concurrency`, and
     * the brake, LoopBrake; with a limit of their own, no brake).
     */
    add (sessionIds: readonly string[], limit?: number): void {
      if (closed) return
      const entry = { limit: limit ?? o.concurrency, braked: limit === undefined }
      for (const id of sessionIds) {
        // dropped while holding a place and wanted again: its start goes on (or was made) after all
        if (opening.has(id)) dropped.delete(id)
        else if (!waiting.has(id)) waiting.set(id, entry)
      }
      pump()
    },
    /**
     * The session is not to be opened here any more: taken off the queue, or skipped if it holds a place and
     * has not started yet; resolves once a start already under way has returned (the socket can be ended).
     */
    async drop (sessionId: string): Promise<void> {
      waiting.delete(sessionId)
      if (opening.has(sessionId)) dropped.add(sessionId)
      await starting.get(sessionId)
    },
    /** the sessions waiting and opening; `only`: counting those alone (a scoped key's) */
    progress (only?: ReadonlySet<string>): PacerProgress {
      if (only === undefined) return { waiting: waiting.size, opening: opening.size }
      let w = 0
      let p = 0
      for (const id of waiting.keys()) if (only.has(id)) w++
      for (const id of opening) if (only.has(id)) p++
      return { waiting: w, opening: p }
    },
    /** resolves once nothing waits and no handshake holds a place */
    async idle (): Promise<void> {
      if (waiting.size === 0 && opening.size === 0) return
      await new Promise<void>((resolve) => {
        const done = (): void => { idleWaiters.delete(done); resolve() }
        idleWaiters.add(done)
      })
    },
    /** nothing more starts; pauses end, the queue is forgotten */
    close (): void {
      closed = true
      waiting.clear()
      for (const p of [...pauses]) { clearTimeout(p.timer); p.resolve() }
      pauses.clear()
      for (const done of [...idleWaiters]) done()
    }
  }
}

export type Pacer = ReturnType<typeof createPacer>
