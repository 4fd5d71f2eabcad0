import { statSync } from 'node:fs'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { statusTotals, storageBySession, uploadTotals } from '../../db/repositories/system.js'
import { failures, Ok } from '../../schemas/envelope.js'
import { HealthSchema, StatsSchema, StorageSchema, type Health } from '../../schemas/system.js'
import type { HealthReport } from '../../plugins/app/health.js'
import { APP_VERSION } from '../../version.js'

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
    schema: { tags: ['system'], summary: 'Aggregate statistics over all sessions', response: { 200: Ok(StatsSchema), ...failures() } }
  }, async () => {
    const sessions = await app.sessions.list()
    // the statuses sent-statuses lists: not expired yet, whatever their state
    const totals = await statusTotals(app.db.db, Date.now() - app.config.statusTtlMs)
    return {
      success: true as const,
      data: {
        totalSessions: sessions.length,
        connectedSessions: sessions.filter((s) => s.connected).length,
        totalStatuses: totals.statuses,
        totalViewers: totals.realViewers,
        lastStatusSent: totals.lastCreatedAt === null ? null : new Date(totals.lastCreatedAt).toISOString(),
        sessions: sessions.map((s) => ({ sessionId: s.sessionId, sessionName: s.sessionName, connected: s.connected, ownNumber: s.ownNumber, createdAt: s.createdAt }))
      }
    }
  })

  app.get('/storage', {
    schema: { tags: ['system'], summary: 'Database and media storage, per session', response: { 200: Ok(StorageSchema), ...failures() } }
  }, async () => {
    const { db, file } = app.db
    return {
      success: true as const,
      data: {
        database: { file, bytes: fileSize(file), walBytes: fileSize(`${file}-wal`) },
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
