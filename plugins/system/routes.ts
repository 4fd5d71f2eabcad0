import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { failures, Ok } from '../../schemas/envelope.js'
import { ClusterSchema, HealthSchema, StatsSchema, StorageSchema, type Health, type Stats } from '../../schemas/system.js'
import { APP_VERSION } from '../../src/version.js'
import { piecedObjectAnswer } from '../core/pieced-json.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  // 1,000 sessions are ~140 KB of JSON: sent in pieces (the pieced-json speed trick, src/speed-tricks.ts)
  const stats = piecedObjectAnswer<Stats, 'sessions'>(StatsSchema, 'sessions', app.config.speedTricksOff.has('pieced-json'))
  app.get('/health', {
    config: { scope: 'any' },
    schema: {
      tags: ['system'],
      summary: 'Service health',
      description: 'Answers 200 whether `healthy` or `degraded`: read `data.status`, and `data.checks` for the reason.',
      response: { 200: Ok(HealthSchema), ...failures() }
    },
    // a few hundred bytes, under the compression threshold (1 KiB) unless hundreds of sessions are down
    compress: false
  }, async () => {
    const report = await app.health.run()
    return {
      success: true as const,
      data: {
        status: report.healthy ? 'healthy' as const : 'degraded' as const,
        timestamp: new Date().toISOString(),
        uptime: process.uptime(),
        version: APP_VERSION,
        checks: report.checks as Health['checks']
      }
    }
  })

  app.get('/stats', {
    config: { scope: 'read' },
    schema: { tags: ['system'], summary: 'Aggregate statistics over all sessions (a scoped key: over its own sessions)', response: { 200: Ok(StatsSchema), ...failures() } }
  }, async (req, reply) => {
    const scoped = req.principal?.admin === false ? req.principal : null
    // the statuses sent-statuses lists: not expired yet, whatever their state
    const since = Date.now() - app.config.statusTtlMs
    const { system } = app.stores
    // every session's totals asked at once: during a start of 1,000 sessions each query waits its turn on the
    // database behind the sessions' writes, and five in a row made this answer 4 × health's (issue 41)
    const everyone = scoped === null || scoped.sessions === '*'
    const [sessions, allTotals, allAnswers] = await Promise.all([
      app.sessions.list(scoped),
      everyone ? system.statusTotals(since) : undefined,
      everyone ? system.interactionTotals(since) : undefined
    ])
    const only = everyone ? undefined : sessions.map((s) => s.sessionId)
    const totals = allTotals ?? await system.statusTotals(since, only)
    const answers = allAnswers ?? await system.interactionTotals(since, only)
    return stats(reply, {
      totalSessions: sessions.length,
      connectedSessions: sessions.filter((s) => s.connected).length,
      totalStatuses: totals.statuses,
      totalViewers: totals.realViewers,
      totalReactions: answers.reactions,
      totalReplies: answers.replies,
      lastStatusSent: totals.lastCreatedAt === null ? null : new Date(totals.lastCreatedAt).toISOString(),
      start: app.supervisor.progress(only === undefined ? undefined : new Set(only)),
      sessions: sessions.map((s) =>
        ({ sessionId: s.sessionId, sessionName: s.sessionName, connected: s.connected, ownNumber: s.ownNumber, createdAt: s.createdAt }))
    })
  })

  app.get('/cluster', {
    config: { scope: 'admin' },
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
    config: { scope: 'admin' },
    schema: { tags: ['system'], summary: 'Database and media storage, per session (admin key only: it spans every session)', response: { 200: Ok(StorageSchema), ...failures() } }
  }, async () => {
    const { system } = app.stores
    return {
      success: true as const,
      data: {
        database: await system.databaseSize(),
        uploads: { ...await system.uploadTotals(), store: app.mediaStore.kind, location: app.mediaStore.location },
        sessions: await system.storageBySession()
      }
    }
  })
}

export default routes
