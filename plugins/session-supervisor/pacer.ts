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
}

/** Where a paced start stands: sessions waiting for a place, and handshakes under way. */
export interface PacerProgress { waiting: number, opening: number }

export function createPacer (o: PacerOptions) {
  const random = o.random ?? Math.random
  /** in the order they were handed over (a Map keeps it), each with the handshakes at once it may join */
  const waiting = new Map<string, number>()
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

  async function run (sessionId: string, jitter: boolean): Promise<void> {
    if (jitter) await pause(Math.floor(random() * o.jitterMs))
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
      const [sessionId, limit] = waiting.entries().next().value as [string, number]
      if (opening.size >= limit) break
      waiting.delete(sessionId)
      opening.add(sessionId)
      void run(sessionId, fromIdle).finally(() => {
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
     * `limit`: each starts once fewer than that many handshakes are under way (default: `concurrency`).
     */
    add (sessionIds: readonly string[], limit = o.concurrency): void {
      if (closed) return
      for (const id of sessionIds) {
        // dropped while holding a place and wanted again: its start goes on (or was made) after all
        if (opening.has(id)) dropped.delete(id)
        else if (!waiting.has(id)) waiting.set(id, limit)
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
