import type { FastifyBaseLogger } from 'fastify'
import type { NewSessionRow } from '../../src/db/database.js'
import type { LeaseStore } from '../../src/db/stores/leases.js'

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
    const lost = [...this.running].filter((id) => !mine.has(id))
    if (lost.length > 0) this.o.log.warn({ sessions: lost }, 'cluster: leases lost (deleted or taken over); ending their sockets')
    await Promise.all(lost.map(async (id) => { await this.#stop(id) }))
    // ours, but not running: stopped for safety while renewals failed
    await this.#startAll([...mine].filter((id) => !this.running.has(id)))

    const orphans = await leases.orphaned(now)
    if (orphans.length > 0) {
      const nodes = await leases.liveNodes(now, now - ttlMs)
      const placed = placeOrphans(orphans, nodes)
      const ours = orphans.filter((id) => placed.get(id) === nodeId)
      const claimed: string[] = []
      for (const id of ours) if (await leases.claim(id, nodeId, now, now + ttlMs)) claimed.push(id)
      if (claimed.length > 0) this.o.log.info({ sessions: claimed }, 'cluster: took over orphaned sessions')
      await this.#startAll(claimed)
    }
    await leases.pruneNodes(now - 100 * ttlMs)
  }

  /** A session created through this node: stored with its lease in one transaction, then started here. */
  async createOwned (row: NewSessionRow): Promise<boolean> {
    const sent = performance.now()
    if (!await this.o.leases.insertOwnedSession(row, this.o.nodeId, this.o.ttlMs)) return false
    if (this.#validUntil === 0) this.#validUntil = sent + this.o.ttlMs
    await this.#startAll([row.id])
    return true
  }

  async #startAll (ids: string[]): Promise<void> {
    if (ids.length === 0 || this.#closed) return
    if (performance.now() >= this.#deadline) return
    await Promise.all(ids.map(async (id) => {
      this.running.add(id)
      try {
        await this.o.start(id)
      } catch (err) {
        this.o.log.error({ err, sessionId: id }, 'cluster: could not start an owned session')
      }
    }))
  }

  async #stop (id: string): Promise<void> {
    this.running.delete(id)
    try {
      await this.o.stop(id)
    } catch (err) {
      this.o.log.error({ err, sessionId: id }, 'cluster: could not end a session socket')
    }
  }

  #checkDeadline (): void {
    if (this.#closed || this.running.size === 0 || performance.now() < this.#deadline) return
    const ids = [...this.running]
    this.o.log.error({ sessions: ids.length }, 'cluster: leases not renewed in time (database unreachable?); ending every socket before another node may take them')
    for (const id of ids) void this.#stop(id)
  }

  /** Stops the rounds; sockets are ended by the platform's own close. */
  async halt (): Promise<void> {
    this.#closed = true
    if (this.#timer !== null) clearInterval(this.#timer)
    if (this.#safety !== null) clearInterval(this.#safety)
    await this.#ticking
  }

  /** After the sockets are down: leases and the node row go, so the others take the sessions at their next round. */
  async resign (): Promise<void> {
    await this.o.leases.release(this.o.nodeId)
    await this.o.leases.removeNode(this.o.nodeId)
  }
}
