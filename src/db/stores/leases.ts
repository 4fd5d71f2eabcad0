import { sql, type Kysely, type RawBuilder } from 'kysely'
import type { Database } from '../database.js'

// Cluster mode's queries: the node registry and the session leases. Every time is the database's clock
// (one clock for every node, so no node's drift moves a lease), in milliseconds since the epoch.

type Db = Kysely<Database>

export interface NodeInfo { nodeId: string, url: string, lastSeen: number, sessions: string[] }

export interface LiveNode { nodeId: string, url: string, load: number, lastSeen: number, arriving: number }

/** a lease taken this recently whose socket is not reported open yet counts as a session on its way to its node */
export const ARRIVAL_MS = 30_000

/** The cluster's nodes and session leases (cluster mode); every time is the database's clock. */
export interface LeaseStore {
  /** the database's clock in milliseconds */
  now: () => Promise<number>
  /** registers the node or beats its heartbeat */
  heartbeat: (nodeId: string, url: string, now: number) => Promise<void>
  /** extends every lease the node holds; the sessions it still owns (a lease taken over is not among them) */
  renew: (nodeId: string, expiresAt: number) => Promise<string[]>
  /** takes the leases that are not held or have expired (of two nodes trying at once, one wins each); the sessions this node owns now */
  claim: (sessionIds: string[], nodeId: string, now: number, expiresAt: number) => Promise<string[]>
  /** gives up the node's leases (all, or these sessions') so other nodes take them at their next look */
  release: (nodeId: string, sessionIds?: string[]) => Promise<void>
  removeNode: (nodeId: string) => Promise<void>
  /** sessions without a live owner (no lease, or an expired one: `lapsed`), oldest first */
  orphaned: (now: number) => Promise<Array<{ sessionId: string, lapsed: boolean }>>
  /**
   * nodes whose heartbeat is newer than `since`, with how many live leases each holds, when it last beat, and how
   * many of its leases it took in the last `ARRIVAL_MS` without reporting the socket open yet (sessions on their way)
   */
  liveNodes: (now: number, since: number) => Promise<LiveNode[]>
  /**
   * Moves these leases from `from` to `to` in one statement (only those `from` still holds): the new owner finds
   * them at its next renewal and opens them. The sessions moved.
   */
  handOver: (sessionIds: string[], from: string, to: string, now: number, expiresAt: number) => Promise<string[]>
  /** the node that owns a session now (an unexpired lease), with its address */
  ownerOf: (sessionId: string, now: number) => Promise<{ nodeId: string, url: string } | undefined>
  /** the connection status the owners last reported, per session with a live lease */
  reportedStatuses: (now: number) => Promise<Map<string, string | null>>
  reportStatus: (sessionId: string, nodeId: string, status: string) => Promise<void>
  /** every registered node with the sessions it owns now */
  view: (now: number) => Promise<NodeInfo[]>
  /** forgets nodes not seen since `before` that hold no lease any more */
  pruneNodes: (before: number) => Promise<void>
  /** the cluster's shared forwarding secret: the stored one, or `generated` stored by whichever node asks first */
  sharedSecret: (generated: string) => Promise<string>
  /**
   * The same store on connections of its own, for the lease renewals (openLeaseDb says why); null when the
   * database is the embedded file, which no other node can share. `close` ends those connections.
   */
  renewals: (opts: { nodeId: string, timeoutMs: number, onError: (err: Error) => void }) => (LeaseStore & { close: () => Promise<void> }) | null
}

/** A backend's renewal connections (PostgreSQL's openLeaseDb), given who renews; see `renewals`. */
export type OpenRenewals = (opts: { nodeId: string, timeoutMs: number, onError: (err: Error) => void }) => { db: Db, close: () => Promise<void> }

/** What differs per backend: the clock (an SQL expression of the milliseconds since the epoch), and renewal connections (null: none). */
export interface LeaseBackend { clock: RawBuilder<string>, renewals: OpenRenewals | null }

/** The queries both backends run the same but the clock's (CLOCK in src/db/sqlite/index.ts and src/db/postgres/index.ts). */
export function leaseStore (db: Db, backend: LeaseBackend): LeaseStore {
  return {
    now: async () => await dbNow(db, backend.clock),
    heartbeat: async (nodeId, nodeUrl, now) => { await heartbeat(db, nodeId, nodeUrl, now) },
    renew: async (nodeId, expiresAt) => await renewLeases(db, nodeId, expiresAt),
    claim: async (sessionIds, nodeId, now, expiresAt) => await claimLeases(db, sessionIds, nodeId, now, expiresAt),
    release: async (nodeId, sessionIds) => { await releaseLeases(db, nodeId, sessionIds) },
    removeNode: async (nodeId) => { await removeNode(db, nodeId) },
    orphaned: async (now) => await orphanedSessions(db, now),
    liveNodes: async (now, since) => await liveNodes(db, now, since),
    handOver: async (sessionIds, from, to, now, expiresAt) => await handOver(db, sessionIds, from, to, now, expiresAt),
    ownerOf: async (sessionId, now) => await ownerOf(db, sessionId, now),
    reportedStatuses: async (now) => await reportedStatuses(db, now),
    reportStatus: async (sessionId, nodeId, status) => { await reportStatus(db, sessionId, nodeId, status) },
    view: async (now) => await clusterView(db, now),
    pruneNodes: async (before) => { await pruneNodes(db, before) },
    sharedSecret: async (generated) => await sharedClusterSecret(db, generated),
    renewals: (opts) => {
      if (backend.renewals === null) return null
      const own = backend.renewals(opts)
      return { ...leaseStore(own.db, { clock: backend.clock, renewals: null }), close: own.close }
    }
  }
}

/** The database's clock in milliseconds. */
async function dbNow (db: Db, clock: RawBuilder<string>): Promise<number> {
  const { rows } = await sql<{ now: string | number }>`select ${clock} as now`.execute(db)
  return Number(rows[0].now)
}

/** Registers the node or beats its heartbeat. */
async function heartbeat (db: Db, nodeId: string, url: string, now: number): Promise<void> {
  await db.insertInto('nodes').values({ node_id: nodeId, url, started_at: now, last_seen: now })
    .onConflict((oc) => oc.column('node_id').doUpdateSet({ url, last_seen: now })).execute()
}

/** Extends every lease the node holds; answers the sessions it still owns (a lease taken over is not among them). */
async function renewLeases (db: Db, nodeId: string, expiresAt: number): Promise<string[]> {
  const rows = await db.updateTable('session_leases').set({ expires_at: expiresAt })
    .where('node_id', '=', nodeId).returning('session_id').execute()
  return rows.map((r) => r.session_id)
}

/**
 * Takes the leases when there are none or they have expired, in one statement (a conditional upsert per row:
 * of two nodes trying at once, one wins each; a failover's share is claimed at once, not a round trip per
 * session); answers the sessions this node owns now.
 */
async function claimLeases (db: Db, sessionIds: string[], nodeId: string, now: number, expiresAt: number): Promise<string[]> {
  const owned: string[] = []
  // 500 rows a statement: five parameters each, well within either database's limit
  for (let i = 0; i < sessionIds.length; i += 500) {
    const rows = await db.insertInto('session_leases')
      .values(sessionIds.slice(i, i + 500).map((id) => ({ session_id: id, node_id: nodeId, expires_at: expiresAt, acquired_at: now, status: null })))
      .onConflict((oc) => oc.column('session_id')
        .doUpdateSet({ node_id: nodeId, expires_at: expiresAt, acquired_at: now, status: null })
        .where('session_leases.expires_at', '<', now))
      .returning('session_id').execute()
    for (const r of rows) owned.push(r.session_id)
  }
  return owned
}

/** Gives up the node's leases (all, or these sessions') so other nodes take them at their next look. */
async function releaseLeases (db: Db, nodeId: string, sessionIds?: string[]): Promise<void> {
  if (sessionIds?.length === 0) return
  let q = db.deleteFrom('session_leases').where('node_id', '=', nodeId)
  if (sessionIds !== undefined) q = q.where('session_id', 'in', sessionIds)
  await q.execute()
}

async function removeNode (db: Db, nodeId: string): Promise<void> {
  await db.deleteFrom('nodes').where('node_id', '=', nodeId).execute()
}

/** Sessions without a live owner (no lease, or an expired one), oldest first. */
async function orphanedSessions (db: Db, now: number): Promise<Array<{ sessionId: string, lapsed: boolean }>> {
  const rows = await db.selectFrom('sessions')
    .leftJoin('session_leases', 'session_leases.session_id', 'sessions.id')
    .select(['sessions.id', 'session_leases.node_id'])
    .where((eb) => eb.or([eb('session_leases.session_id', 'is', null), eb('session_leases.expires_at', '<', now)]))
    .orderBy('sessions.created_at').orderBy('sessions.id')
    .execute()
  return rows.map((r) => ({ sessionId: r.id, lapsed: r.node_id !== null }))
}

/** Nodes whose heartbeat is newer than `since`, with their live leases and the sessions on their way to them. */
async function liveNodes (db: Db, now: number, since: number): Promise<LiveNode[]> {
  const nodes = await db.selectFrom('nodes').select(['node_id', 'url', 'last_seen']).where('last_seen', '>=', since).orderBy('node_id').execute()
  const counts = await db.selectFrom('session_leases')
    .select((eb) => [
      'node_id',
      eb.fn.countAll<string | number>().as('n'),
      eb.fn.count<string | number>('session_id').filterWhere((w) => w.and([
        w('acquired_at', '>=', now - ARRIVAL_MS),
        w.or([w('status', 'is', null), w('status', '!=', 'open')])
      ])).as('arriving')
    ])
    .where('expires_at', '>=', now).groupBy('node_id').execute()
  const load = new Map(counts.map((c) => [c.node_id, c]))
  return nodes.map((n) => ({
    nodeId: n.node_id,
    url: n.url,
    lastSeen: Number(n.last_seen),
    load: Number(load.get(n.node_id)?.n ?? 0),
    arriving: Number(load.get(n.node_id)?.arriving ?? 0)
  }))
}

/** Moves the leases `from` still holds to `to` in one statement; the sessions moved. */
async function handOver (db: Db, sessionIds: string[], from: string, to: string, now: number, expiresAt: number): Promise<string[]> {
  if (sessionIds.length === 0) return []
  const rows = await db.updateTable('session_leases').set({ node_id: to, expires_at: expiresAt, acquired_at: now, status: null })
    .where('node_id', '=', from).where('session_id', 'in', sessionIds).returning('session_id').execute()
  return rows.map((r) => r.session_id)
}

/** The node that owns a session now (an unexpired lease), with its address. */
async function ownerOf (db: Db, sessionId: string, now: number): Promise<{ nodeId: string, url: string } | undefined> {
  const row = await db.selectFrom('session_leases')
    .innerJoin('nodes', 'nodes.node_id', 'session_leases.node_id')
    .select(['nodes.node_id', 'nodes.url'])
    .where('session_leases.session_id', '=', sessionId).where('session_leases.expires_at', '>=', now)
    .executeTakeFirst()
  return row === undefined ? undefined : { nodeId: row.node_id, url: row.url }
}

/** The connection status the owners last reported, per session with a live lease. */
async function reportedStatuses (db: Db, now: number): Promise<Map<string, string | null>> {
  const rows = await db.selectFrom('session_leases').select(['session_id', 'status']).where('expires_at', '>=', now).execute()
  return new Map(rows.map((r) => [r.session_id, r.status]))
}

async function reportStatus (db: Db, sessionId: string, nodeId: string, status: string): Promise<void> {
  await db.updateTable('session_leases').set({ status }).where('session_id', '=', sessionId).where('node_id', '=', nodeId).execute()
}

/** Every registered node with the sessions it owns now, and the lease-less ones under no node. */
async function clusterView (db: Db, now: number): Promise<NodeInfo[]> {
  const nodes = await db.selectFrom('nodes').select(['node_id', 'url', 'last_seen']).orderBy('node_id').execute()
  const leases = await db.selectFrom('session_leases').select(['session_id', 'node_id'])
    .where('expires_at', '>=', now).orderBy('session_id').execute()
  return nodes.map((n) => ({
    nodeId: n.node_id,
    url: n.url,
    lastSeen: Number(n.last_seen),
    sessions: leases.filter((l) => l.node_id === n.node_id).map((l) => l.session_id)
  }))
}

/** Forgets nodes not seen since `before` that hold no lease any more. */
async function pruneNodes (db: Db, before: number): Promise<void> {
  await db.deleteFrom('nodes').where('last_seen', '<', before)
    .where((eb) => eb.not(eb.exists(eb.selectFrom('session_leases').select('session_id').whereRef('session_leases.node_id', '=', 'nodes.node_id'))))
    .execute()
}

/** A new session's lease for `nodeId`, inside the transaction that stores the session (so no node sees it unowned): `tx.leases.hold`. */
export async function insertLease (trx: Db, clock: RawBuilder<string>, sessionId: string, nodeId: string, ttlMs: number): Promise<void> {
  const now = await dbNow(trx, clock)
  await trx.insertInto('session_leases').values({ session_id: sessionId, node_id: nodeId, expires_at: now + ttlMs, acquired_at: now, status: null }).execute()
}

/** The cluster's shared forwarding secret: the stored one, or `generated` stored by whichever node asks first. */
async function sharedClusterSecret (db: Db, generated: string): Promise<string> {
  await db.insertInto('cluster_secret').values({ id: 1, secret: generated }).onConflict((oc) => oc.column('id').doNothing()).execute()
  const row = await db.selectFrom('cluster_secret').select('secret').where('id', '=', 1).executeTakeFirstOrThrow()
  return row.secret
}
