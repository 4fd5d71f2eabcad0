import type { FastifyBaseLogger } from 'fastify'
import type { LeaseStore } from '../../src/db/stores/leases.js'

/** why a node hands sessions over: a node joined or came back (the spread is uneven), or this node is leaving */
export type MoveReason = 'rebalance' | 'leave'
/** how a session came to this node: handed over by its owner, taken after its owner's lease lapsed, or no owner at all */
export type Arrival = 'handover' | 'failover' | 'orphan'

export interface KeeperOptions {
  /** on connections of their own (LeaseStore.renewals) */
  leases: LeaseStore
  nodeId: string
  url: string
  ttlMs: number
  renewMs: number
  log: FastifyBaseLogger
  /** this node owns the session now: start its socket */
  start: (sessionId: string) => Promise<void>
  /** this node no longer owns the session (or may not for long): end its socket, keep its auth state */
  stop: (sessionId: string) => Promise<void>
  /** most sessions on their way to one node at once (handed over and not open there yet) */
  moveBatch: number
  /** whether the session may move now (its socket is open: one being linked keeps its QR code where it is) */
  movable: (sessionId: string) => boolean
  /** sessions this node handed over, why, to whom, and how long their sockets were down here before the lease moved */
  onHandedOver?: (move: { reason: MoveReason, to: string, sessions: string[], ms: number }) => void
}

/** Least-loaded live node first, ties by name: every node computes the same placement from the same rows. */
export function placeOrphans (orphans: string[], nodes: Array<{ nodeId: string, load: number }>): Map<string, string> {
  const load = new Map(nodes.map((n) => [n.nodeId, n.load]))
  const placed = new Map<string, string>()
  if (load.size === 0) return placed
  for (const sessionId of orphans) {
    let best: string | undefined
    for (const [nodeId, n] of load) if (best === undefined || n < load.get(best)! || (n === load.get(best) && nodeId < best)) best = nodeId
    placed.set(sessionId, best!)
    load.set(best!, load.get(best!)! + 1)
  }
  return placed
}

/**
 * The moves that even out the live nodes' loads to within one session, computed the same on every node from the same
 * rows (most loaded first, ties by name): the nodes above their share give to those below it, and no node gets more
 * than `batch` sessions on their way to it at once (`arriving` counts those it has not opened yet). Answers what
 * `self` hands over, per node.
 */
export function planMoves (nodes: Array<{ nodeId: string, load: number, arriving: number }>, self: string, batch: number): Map<string, number> {
  const moves = new Map<string, number>()
  if (nodes.length < 2) return moves
  const loads = nodes.map((n) => n.load)
  if (Math.max(...loads) - Math.min(...loads) <= 1) return moves
  const total = loads.reduce((a, b) => a + b, 0)
  const base = Math.floor(total / nodes.length)
  const byLoad = [...nodes].sort((a, b) => b.load - a.load || (a.nodeId < b.nodeId ? -1 : 1))
  // the most loaded keep the remainder, one each: they give no more than they must
  const target = (i: number): number => base + (i < total % nodes.length ? 1 : 0)
  const givers = byLoad.map((n, i) => ({ nodeId: n.nodeId, surplus: n.load - target(i) })).filter((g) => g.surplus > 0)
  const takers = byLoad.map((n, i) => ({ nodeId: n.nodeId, room: Math.min(target(i) - n.load, batch - n.arriving) })).filter((t) => t.room > 0).reverse()
  let t = 0
  for (const giver of givers) {
    while (giver.surplus > 0 && t < takers.length) {
      const k = Math.min(giver.surplus, takers[t].room)
      if (giver.nodeId === self) moves.set(takers[t].nodeId, (moves.get(takers[t].nodeId) ?? 0) + k)
      giver.surplus -= k
      takers[t].room -= k
      if (takers[t].room === 0) t++
    }
  }
  return moves
}

/**
 * Session ownership by leases in the shared database. Every `renewMs` the node beats its heartbeat, renews
 * all its leases in one conditional UPDATE (the rows it gets back are what it still owns) and takes the
 * orphaned sessions (no lease, or an expired one) placed on it, each with a conditional upsert that only
 * one node can win. A lease lasts `ttlMs` from the renewal, measured on the database's clock; the node
 * counts from the moment it SENT the renewal on its own monotonic clock, which is never later, and ends
 * every socket once `ttlMs - renewMs` has passed without a renewal that succeeded: its sockets are down
 * before any other node may take the leases over, so two nodes never hold one account's socket.
 */
export class LeaseKeeper {
  /** sessions this node runs a socket for */
  readonly running = new Set<string>()
  /** sessions that came to this node and are not open yet: how they came and since when (performance.now()) */
  readonly #arriving = new Map<string, { how: Arrival, since: number }>()
  /** sessions this node stopped because its renewals failed: started again when they succeed, not arrivals */
  readonly #paused = new Set<string>()
  /** per session, the start or stop under way (see #serial) */
  readonly #queue = new Map<string, Promise<void>>()
  /** local monotonic time (performance.now()) before which our leases are surely still ours */
  #validUntil = 0
  #timer: NodeJS.Timeout | null = null
  #safety: NodeJS.Timeout | null = null
  #ticking: Promise<void> | null = null
  #closed = false

  constructor (private readonly o: KeeperOptions) {}

  /** the moment (monotonic) sockets must be down when no renewal succeeds before it */
  get #deadline (): number {
    return this.#validUntil - this.o.renewMs
  }

  /** Registers the node, gives up leases a previous run of it left behind, takes its first share and starts the timers. */
  async begin (): Promise<void> {
    const { leases, nodeId, url } = this.o
    await leases.heartbeat(nodeId, url, await leases.now())
    // the previous process of this node is gone (this one has its id): its sessions go through the normal placement
    await leases.release(nodeId)
    await this.tick()
    this.#timer = setInterval(() => { void this.tick() }, this.o.renewMs)
    this.#safety = setInterval(() => { this.#checkDeadline() }, Math.max(50, Math.floor(this.o.renewMs / 4)))
  }

  /** One round; rounds never overlap (a slow database skips rounds, the safety timer still watches). */
  async tick (): Promise<void> {
    if (this.#closed || this.#ticking !== null) return await this.#ticking ?? undefined
    this.#ticking = this.#round().catch((err: unknown) => {
      this.o.log.warn({ err }, 'cluster: lease round failed (sockets stop if renewals keep failing)')
    }).finally(() => { this.#ticking = null })
    await this.#ticking
  }

  async #round (): Promise<void> {
    const { leases, nodeId, url, ttlMs } = this.o
    const sent = performance.now()
    const now = await leases.now()
    await leases.heartbeat(nodeId, url, now)
    const mine = new Set(await leases.renew(nodeId, now + ttlMs))
    if (this.#closed) return
    this.#validUntil = sent + ttlMs
    for (const id of this.#paused) if (!mine.has(id)) this.#paused.delete(id)
    const lost = [...this.running].filter((id) => !mine.has(id))
    if (lost.length > 0) this.o.log.warn({ sessions: lost }, 'cluster: leases lost (deleted or taken over); ending their sockets')
    await Promise.all(lost.map(async (id) => { await this.#stop(id) }))
    // ours, but not running: stopped for safety while renewals failed, or handed over to this node by its owner
    const idle = [...mine].filter((id) => !this.running.has(id))
    const handed = idle.filter((id) => !this.#paused.has(id))
    if (handed.length > 0) this.o.log.info({ sessions: handed }, 'cluster: sessions handed over to this node; opening them')
    this.#arrive(handed, 'handover')
    for (const id of idle) this.#paused.delete(id)
    // not awaited: a slow start (the platform loading, many logins) must not hold the next renewal back
    void this.#startAll(idle)

    const found = await leases.orphaned(now)
    if (found.length > 0) {
      const orphans = found.map((o) => o.sessionId)
      const lapsed = new Set(found.filter((o) => o.lapsed).map((o) => o.sessionId))
      const nodes = await leases.liveNodes(now, now - ttlMs)
      const placed = placeOrphans(orphans, nodes)
      const ours = orphans.filter((id) => placed.get(id) === nodeId)
      const claimed = await leases.claim(ours, nodeId, now, now + ttlMs)
      if (claimed.length > 0) this.o.log.info({ sessions: claimed }, 'cluster: took over orphaned sessions')
      for (const id of claimed) this.#arrive([id], lapsed.has(id) ? 'failover' : 'orphan')
      void this.#startAll(claimed)
    } else {
      // every session has a live owner: now the spread may be evened out (never while a failover is under way)
      await this.#rebalance(now)
    }
    await leases.pruneNodes(now - 100 * ttlMs)
  }

  /**
   * Hands sessions to nodes below their share (planMoves), a batch at a time: each one's socket ends here, then its
   * lease goes to the new owner in one statement, which opens it at its next round. Only nodes that beat their
   * heartbeat in the last two rounds count: a node that just died takes nothing.
   */
  async #rebalance (now: number): Promise<void> {
    const { leases, nodeId, ttlMs, renewMs, moveBatch } = this.o
    const nodes = await leases.liveNodes(now, now - 2 * renewMs)
    if (!nodes.some((n) => n.nodeId === nodeId)) return
    const plan = planMoves(nodes, nodeId, moveBatch)
    if (plan.size === 0) return
    const movable = [...this.running].filter((id) => this.o.movable(id)).sort()
    for (const [to, count] of plan) {
      const ids = movable.splice(0, count)
      if (ids.length === 0) break
      await this.#handOver(ids, to, 'rebalance', async () => await leases.now() + ttlMs)
    }
  }

  /** One hand-over: the sockets end here, then the leases move to `to` (those not moved start again at the next round). */
  async #handOver (ids: string[], to: string, reason: MoveReason, expiry: () => Promise<number>): Promise<void> {
    const began = performance.now()
    await Promise.all(ids.filter((id) => this.running.has(id)).map(async (id) => { await this.#stop(id) }))
    let moved: string[] = []
    try {
      const expiresAt = await expiry()
      moved = await this.o.leases.handOver(ids, this.o.nodeId, to, expiresAt - this.o.ttlMs, expiresAt)
    } catch (err) {
      this.o.log.warn({ err, sessions: ids, to }, 'cluster: could not hand sessions over (they start here again)')
    }
    const ms = Math.round(performance.now() - began)
    // not moved (the hand-over failed, or the lease was ours no more): still ours ones start again at the next round
    for (const id of ids) if (!moved.includes(id)) this.#paused.add(id)
    if (moved.length === 0) return
    this.o.log.info({ reason, to, sessions: moved, ms }, 'cluster: handed sessions over')
    this.o.onHandedOver?.({ reason, to, sessions: moved, ms })
  }

  #arrive (ids: string[], how: Arrival): void {
    const since = performance.now()
    for (const id of ids) this.#arriving.set(id, { how, since })
  }

  /** The session's socket is open here: how it came to this node and how long that took (undefined: it was here already). */
  opened (sessionId: string): { how: Arrival, ms: number } | undefined {
    const came = this.#arriving.get(sessionId)
    if (came === undefined) return undefined
    this.#arriving.delete(sessionId)
    return { how: came.how, ms: Math.round(performance.now() - came.since) }
  }

  /** A session created through this node, its lease stored with it: started here (at the next round if renewals are failing). */
  async adopt (sessionId: string): Promise<void> {
    // a round between its commit and this call found it idle and started it already: one start, not two
    if (this.running.has(sessionId)) return
    await this.#startAll([sessionId])
  }

  async #startAll (ids: string[]): Promise<void> {
    if (ids.length === 0 || this.#closed) return
    if (performance.now() >= this.#deadline) return
    await Promise.all(ids.map(async (id) => {
      this.running.add(id)
      await this.#serial(id, async () => {
        if (!this.running.has(id)) return // stopped again before its turn
        try {
          await this.o.start(id)
        } catch (err) {
          this.o.log.error({ err, sessionId: id }, 'cluster: could not start an owned session')
        }
      })
    }))
  }

  async #stop (id: string): Promise<void> {
    this.running.delete(id)
    this.#arriving.delete(id)
    await this.#serial(id, async () => {
      try {
        await this.o.stop(id)
      } catch (err) {
        this.o.log.error({ err, sessionId: id }, 'cluster: could not end a session socket')
      }
    })
  }

  /** One session's starts and stops run in the order asked: a stop waits for a start under way, so no socket outlives it. */
  async #serial (id: string, work: () => Promise<void>): Promise<void> {
    const next = (this.#queue.get(id) ?? Promise.resolve()).then(work)
    this.#queue.set(id, next)
    try {
      await next
    } finally {
      if (this.#queue.get(id) === next) this.#queue.delete(id)
    }
  }

  #checkDeadline (): void {
    if (this.#closed || this.running.size === 0 || performance.now() < this.#deadline) return
    const ids = [...this.running]
    this.o.log.error({ sessions: ids.length }, 'cluster: leases not renewed in time (database unreachable?); ending every socket before another node may take them')
    for (const id of ids) {
      this.#paused.add(id)
      void this.#stop(id)
    }
  }

  /** Stops the rounds; sockets are ended by the platform's own close. */
  async halt (): Promise<void> {
    this.#closed = true
    if (this.#timer !== null) clearInterval(this.#timer)
    if (this.#safety !== null) clearInterval(this.#safety)
    await this.#ticking
  }

  /**
   * After the sockets are down (a clean stop): the leases go to the live nodes, least loaded first (each opens its
   * share at its next round, without waiting for a lease to lapse), or are given up when no other node is live; then
   * the node row goes.
   */
  async resign (): Promise<void> {
    const { leases, nodeId, ttlMs } = this.o
    this.running.clear()
    const now = await leases.now()
    const mine = await leases.renew(nodeId, now + ttlMs)
    // live as orphan placement counts it: one that died since would have its share back as orphans after the TTL
    const others = (await leases.liveNodes(now, now - ttlMs)).filter((n) => n.nodeId !== nodeId)
    const placed = placeOrphans(mine, others)
    const to = new Map<string, string[]>()
    for (const [id, node] of placed) to.set(node, [...to.get(node) ?? [], id])
    for (const [node, ids] of to) await this.#handOver(ids, node, 'leave', async () => await leases.now() + ttlMs)
    await leases.release(nodeId)
    await leases.removeNode(nodeId)
  }
}
