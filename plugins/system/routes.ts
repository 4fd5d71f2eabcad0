import { statSync } from 'node:fs'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { interactionTotals } from '../../src/db/repositories/interactions.js'
import { postgresDatabaseBytes, statusTotals, storageBySession, uploadTotals } from '../../src/db/repositories/system.js'
import { failures, Ok } from '../../schemas/envelope.js'
import { ClusterSchema, HealthSchema, StatsSchema, StorageSchema, type Health } from '../../schemas/system.js'
import type { HealthReport } from './health.js'
import { APP_VERSION } from '../../src/version.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', {
    schema: {
      tags: ['system'],
      summary: 'Service health',
      description: 'Answers 200 whether `healthy` or `degraded`: read `data.status`, and `data.checks` for the reason.',
      response: { 200: Ok(HealthSchema), ...failures() }
    }
  }, (_req, reply) => {
    const answer = (report: HealthReport) => ({
      success: true as const,
      data: {
        status: report.healthy ? 'healthy' as const : 'degraded' as const,
        timestamp: new Date().toISOString(),
        uptime: process.uptime(),
        version: APP_VERSION,
        checks: report.checks as Health['checks']
      }
    })
    // synchronous when every check is (the service's own are): no promise per request
    const report = app.health.run()
    if (report instanceof Promise) return report.then(answer)
    void reply.send(answer(report))
  })

  app.get('/stats', {
    schema: { tags: ['system'], summary: 'Aggregate statistics over all sessions (a scoped key: over its own sessions)', response: { 200: Ok(StatsSchema), ...failures() } }
  }, async (req) => {
    const scoped = req.principal?.admin === false ? req.principal : null
    const sessions = await app.sessions.list(scoped)
    const only = scoped === null || scoped.sessions === '*' ? undefined : sessions.map((s) => s.sessionId)
    // the statuses sent-statuses lists: not expired yet, whatever their state
    const since = Date.now() - app.config.statusTtlMs
    const totals = await statusTotals(app.db.db, since, only)
    const answers = await interactionTotals(app.db.db, since, only)
    return {
      success: true as const,
      data: {
        totalSessions: sessions.length,
        connectedSessions: sessions.filter((s) => s.connected).length,
        totalStatuses: totals.statuses,
        totalViewers: totals.realViewers,
        totalReactions: answers.reactions,
        totalReplies: answers.replies,
        lastStatusSent: totals.lastCreatedAt === null ? null : new Date(totals.lastCreatedAt).toISOString(),
        sessions: sessions.map((s) => ({ sessionId: s.sessionId, sessionName: s.sessionName, connected: s.connected, ownNumber: s.ownNumber, createdAt: s.createdAt }))
      }
    }
  })

  app.get('/cluster', {
    schema: {
      tags: ['system'],
      summary: 'The nodes sharing the database and the sessions each owns (single-node mode: this node alone); admin key only',
      response: { 200: Ok(ClusterSchema), ...failures() }
    }
  }, async () => {
    const { self, nodes } = await app.cluster.view()
    return { success: true as const, data: { self, nodes: nodes.map((n) => ({ ...n, lastSeen: new Date(n.lastSeen).toISOString() })) } }
  })

  app.get('/storage', {
    schema: { tags: ['system'], summary: 'Database and media storage, per session (admin key only: it spans every session)', response: { 200: Ok(StorageSchema), ...failures() } }
  }, async () => {
    const handle = app.db
    const { db } = handle
    // PostgreSQL: the database's size as the server counts it (WAL is the server's, not one database's)
    const database = handle.dialect === 'sqlite'
      ? { file: handle.file, bytes: fileSize(handle.file), walBytes: fileSize(`${handle.file}-wal`) }
      : { file: 'postgresql', bytes: await postgresDatabaseBytes(db), walBytes: 0 }
    return {
      success: true as const,
      data: {
        database,
        uploads: await uploadTotals(db),
        sessions: await storageBySession(db)
      }
    }
  })
}

function fileSize (path: string): number {
  try { return statSync(path).size } catch { return 0 }
}

export default routes
