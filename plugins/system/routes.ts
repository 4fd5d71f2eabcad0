import { randomUUID } from 'node:crypto'
import { statSync } from 'node:fs'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { postgresDatabaseBytes, statusTotals, storageBySession, uploadTotals } from '../../src/db/repositories/system.js'
import { failures, Ok } from '../../schemas/envelope.js'
import { ClusterSchema, HealthSchema, StatsSchema, StorageSchema, type Health } from '../../schemas/system.js'
import type { HealthReport } from './health.js'
import { APP_VERSION } from '../../src/version.js'

const JSON_TYPE = 'application/json; charset=utf-8'

function healthAnswer (report: HealthReport, timestamp: string, uptime: number) {
  return {
    success: true as const,
    data: {
      status: report.healthy ? 'healthy' as const : 'degraded' as const,
      timestamp,
      uptime,
      version: APP_VERSION,
      checks: report.checks as Health['checks']
    }
  }
}

/** Stand-ins no real answer can hold: where the serialized answer takes the timestamp and the uptime. */
const TIMESTAMP_MARK = `@${randomUUID()}@`
const UPTIME_MARK = -1.234567890123e-300

/**
 * The serialized health answer of `report` cut where the timestamp and the uptime go: the route's own
 * serializer writes it (so it is what the schema makes of it), once per report.
 */
function healthTemplate (report: HealthReport, serialize: (payload: unknown) => string): { report: HealthReport, head: string, middle: string, tail: string } {
  const text = serialize(healthAnswer(report, TIMESTAMP_MARK, UPTIME_MARK))
  const [head, rest = ''] = text.split(TIMESTAMP_MARK)
  const [middle, tail] = rest.split(String(UPTIME_MARK))
  if (tail === undefined) throw new Error('the health answer\'s serializer dropped its timestamp or uptime')
  return { report, head, middle, tail }
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  let template: ReturnType<typeof healthTemplate> | undefined
  // off (SPEED_TRICKS_OFF, src/speed-tricks.ts): every answer an object the route's serializer writes
  const useTemplate = !app.config.speedTricksOff.has('health-template')
  app.get('/health', {
    schema: {
      tags: ['system'],
      summary: 'Service health',
      description: 'Answers 200 whether `healthy` or `degraded`: read `data.status`, and `data.checks` for the reason.',
      response: { 200: Ok(HealthSchema), ...failures() }
    },
    // a few hundred bytes, under the compression threshold (1 KiB) unless hundreds of sessions are down:
    // no compression hook per request
    compress: false
  }, (_req, reply) => {
    // synchronous when every check is (the service's own are): no promise per request
    const report = app.health.current()
    if (report instanceof Promise) return report.then((r) => healthAnswer(r, new Date().toISOString(), process.uptime()))
    if (!useTemplate) return healthAnswer(report, new Date().toISOString(), process.uptime())
    // the same report object while its inputs hold (health.ts `current`): its answer is serialized once,
    // by the route's own serializer, and only the timestamp and uptime are written per request
    if (template?.report !== report) template = healthTemplate(report, (payload) => String(reply.serialize(payload)))
    const text = template.head + new Date().toISOString() + template.middle + String(process.uptime()) + template.tail
    // a string with its JSON content type goes out as it is (the type provider only knows the object form)
    void reply.header('content-type', JSON_TYPE).send(text as unknown as ReturnType<typeof healthAnswer>)
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
    const answers = await app.stores.viewers.interactionTotals(since, only)
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
        uploads: { ...await uploadTotals(db), store: app.mediaStore.kind, location: app.mediaStore.location },
        sessions: await storageBySession(db)
      }
    }
  })
}

function fileSize (path: string): number {
  try { return statSync(path).size } catch { return 0 }
}

export default routes
