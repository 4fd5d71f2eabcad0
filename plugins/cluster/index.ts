import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { clusterView, dbNow, liveNodes, ownerOf, reportedStatuses, reportStatus, type NodeInfo } from '../../src/db/repositories/cluster.js'
import { findSession, listSessions } from '../../src/db/repositories/sessions.js'
import { openLeaseDb } from '../../src/db/connection.js'
import type { NewSessionRow } from '../../src/db/database.js'
import { OwnerUnavailable } from '../../src/errors.js'
import { FORWARDED_HEADER, forwardRequest } from './forward.js'
import { LeaseKeeper } from './lease-keeper.js'

export { FORWARDED_HEADER } from './forward.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** this node among the others (cluster mode), or alone (single-node mode: every session is local) */
    cluster: Cluster
  }
}

export interface Cluster {
  enabled: boolean
  nodeId: string
  /** the nodes and the sessions each owns now */
  view: () => Promise<{ self: string, nodes: NodeInfo[] }>
  /** connection statuses the owners last reported, for sessions owned by other nodes */
  reported: () => Promise<Map<string, string | null>>
  /** a new session stored with its lease on this node, then started here; false when the id is taken */
  createOwned: (row: NewSessionRow) => Promise<boolean>
  /** preHandler: a request that needs the session's socket is answered by the node that owns it */
  toOwner: (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>
  /** preHandler for POST /sessions: the new session is created on the live node with the fewest sessions */
  toLeastLoaded: (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>
}

export default fp(async (app) => {
  const { config, platform } = app
  const { nodeId, nodeUrl, leaseTtlMs, leaseRenewMs, enabled } = config.cluster
  const db = app.db.db
  const log = app.log.child({ plugin: 'cluster', nodeId })
  // a forwarded send may wait out a reconnect (SEND_RECONNECT_WAIT_MS) before it answers
  const forwardOpts = { apiKey: config.apiKey, selfId: nodeId, timeoutMs: config.sendReconnectWaitMs + 60_000 }

  // The leases get their own two connections (openLeaseDb says why)
  const leaseDb = enabled && config.databaseUrl !== null
    ? openLeaseDb(config.databaseUrl, { nodeId, timeoutMs: leaseRenewMs * 2, onError: (err) => { log.warn({ err: { message: err.message } }, 'cluster: lease connection lost') } })
    : null
  const keeper = leaseDb !== null
    ? new LeaseKeeper({
        db: leaseDb.db,
        nodeId,
        url: nodeUrl,
        ttlMs: leaseTtlMs,
        renewMs: leaseRenewMs,
        log,
        start: async (sessionId) => {
          const row = await findSession(db, sessionId)
          if (row === undefined) return
          await platform.startSession({ sessionId, authMethod: row.auth_method, phoneNumber: row.phone_number })
          // sends a crash (of this node or of the previous owner) left `sending` go on here
          await app.statuses.recover([sessionId])
        },
        stop: async (sessionId) => { await platform.releaseSession(sessionId) }
      })
    : null

  const forwarded = (req: FastifyRequest): boolean => typeof req.headers[FORWARDED_HEADER] === 'string'

  const cluster: Cluster = {
    enabled,
    nodeId,
    async view () {
      if (keeper === null) {
        const sessions = (await listSessions(db)).map((s) => s.id).sort()
        return { self: nodeId, nodes: [{ nodeId, url: nodeUrl, sessions, lastSeen: Date.now() }] }
      }
      return { self: nodeId, nodes: await clusterView(db, await dbNow(db)) }
    },
    async reported () {
      return keeper === null ? new Map() : await reportedStatuses(db, await dbNow(db))
    },
    async createOwned (row) {
      if (keeper === null) throw new Error('createOwned is for cluster mode')
      return await keeper.createOwned(row)
    },
    async toOwner (req, reply) {
      const sessionId = (req.params as { sessionId?: string } | undefined)?.sessionId
      // a session whose socket runs here is answered here (started by this node's lease, or directly by a test harness)
      if (keeper === null || sessionId === undefined || keeper.running.has(sessionId) || platform.snapshot(sessionId) !== null) return
      if (forwarded(req)) {
        // passed here as the owner, and it is not any more (or not yet): never passed on again
        if (await findSession(db, sessionId) === undefined) return
        throw new OwnerUnavailable(`Session ${sessionId} is moving between nodes right now; try again in a few seconds`)
      }
      const owner = await ownerOf(db, sessionId, await dbNow(db))
      if (owner === undefined) {
        if (await findSession(db, sessionId) === undefined) return // the handler answers 404
        throw new OwnerUnavailable(`No node holds session ${sessionId} right now (it is being taken over); try again in a few seconds`)
      }
      if (owner.nodeId === nodeId) return // ours, its socket stopped for now: answered here
      // returning the reply tells Fastify the answer is sent: the route's handler does not run here
      return await forwardRequest(req, reply, owner, forwardOpts)
    },
    async toLeastLoaded (req, reply) {
      if (keeper === null || forwarded(req)) return
      const now = await dbNow(db)
      const nodes = await liveNodes(db, now, now - leaseTtlMs)
      const target = nodes.sort((a, b) => a.load - b.load || (a.nodeId < b.nodeId ? -1 : 1))[0]
      if (target === undefined || target.nodeId === nodeId) return
      try {
        return await forwardRequest(req, reply, target, forwardOpts)
      } catch (err) {
        // any node can store a new session: this one does when the chosen one does not answer
        if (reply.sent) throw err
        log.warn({ node: target.nodeId }, 'cluster: the least-loaded node did not answer; creating the session here')
      }
    }
  }
  app.decorate('cluster', cluster)

  if (keeper !== null) {
    // other nodes read the owner's last reported status (GET /sessions lists every session)
    platform.on('connection-status', (e) => {
      if (!keeper.running.has(e.sessionId)) return
      reportStatus(db, e.sessionId, nodeId, e.status).catch((err: unknown) => { log.debug({ err }, 'cluster: could not report a status') })
    })
    app.addHook('onReady', async () => {
      await keeper.begin()
      log.info({ url: nodeUrl, sessions: keeper.running.size }, 'cluster: node joined')
    })
    // sockets end first (the platform's own preClose, idempotent), then the leases go so others take over at once
    app.addHook('preClose', async () => {
      await keeper.halt()
      await platform.close()
      try {
        await keeper.resign()
      } catch (err) {
        log.warn({ err }, 'cluster: could not release leases (they expire on their own)')
      }
      await leaseDb?.close()
    })
  }
}, { name: 'cluster', dependencies: ['config', 'db', 'platform'] })
