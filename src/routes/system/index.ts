import { statSync } from 'node:fs'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { sql } from 'kysely'
import { failures, Ok } from '../../schemas/envelope.js'
import { HealthSchema, StatsSchema, StorageSchema } from '../../schemas/system.js'
import { APP_VERSION } from '../../version.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', {
    schema: { tags: ['system'], summary: 'Service health', response: { 200: Ok(HealthSchema), ...failures() } }
  }, async () => ({
    success: true as const,
    data: { status: 'healthy' as const, timestamp: new Date().toISOString(), uptime: process.uptime(), version: APP_VERSION }
  }))

  app.get('/stats', {
    schema: { tags: ['system'], summary: 'Aggregate statistics over all sessions', response: { 200: Ok(StatsSchema), ...failures() } }
  }, async () => {
    const { db } = app.db
    const sessions = await db.selectFrom('sessions').select(['id', 'name', 'own_number', 'created_at']).orderBy('created_at').execute()
    const totals = await db.selectFrom('statuses')
      .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.max('created_at').as('last')])
      .where('state', '!=', 'failed')
      .executeTakeFirstOrThrow()
    const viewers = await db.selectFrom('viewers').select((eb) => eb.fn.countAll<number>().as('count')).where('is_real', '=', 1).executeTakeFirstOrThrow()
    const list = sessions.map((s) => {
      const snap = app.platform.snapshot(s.id)
      const connected = snap?.connected ?? false
      return { sessionId: s.id, sessionName: s.name, connected, ownNumber: connected ? snap?.ownNumber ?? s.own_number : null, createdAt: new Date(s.created_at).toISOString() }
    })
    return {
      success: true as const,
      data: {
        totalSessions: list.length,
        connectedSessions: list.filter((s) => s.connected).length,
        totalStatuses: Number(totals.count),
        totalViewers: Number(viewers.count),
        lastStatusSent: totals.last === null ? null : new Date(Number(totals.last)).toISOString(),
        sessions: list
      }
    }
  })

  app.get('/storage', {
    schema: { tags: ['system'], summary: 'Database and media storage, per session', response: { 200: Ok(StorageSchema), ...failures() } }
  }, async () => {
    const { db, file } = app.db
    const uploads = await db.selectFrom('uploads')
      .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.coalesce(eb.fn.sum<number>('size'), sql<number>`0`).as('bytes')])
      .executeTakeFirstOrThrow()
    const rows = await db.selectFrom('sessions as s')
      .select((eb) => [
        's.id',
        eb.selectFrom('statuses').whereRef('statuses.session_id', '=', 's.id').select(eb.fn.countAll<number>().as('n')).as('statuses'),
        eb.selectFrom('viewers').innerJoin('statuses', 'statuses.id', 'viewers.status_id').whereRef('statuses.session_id', '=', 's.id').select(eb.fn.countAll<number>().as('n')).as('viewers'),
        sql<number>`(select count(*) from auth_keys k where k.session_id = s.id) + (select count(*) from auth_creds c where c.session_id = s.id)`.as('auth'),
        eb.selectFrom('statuses').innerJoin('uploads', 'uploads.filename', 'statuses.media_file').whereRef('statuses.session_id', '=', 's.id')
          .select(sql<number>`count(distinct uploads.filename)`.as('n')).as('media_files'),
        eb.selectFrom((sub) => sub.selectFrom('statuses').innerJoin('uploads', 'uploads.filename', 'statuses.media_file')
          .whereRef('statuses.session_id', '=', 's.id').select(['uploads.filename', 'uploads.size']).distinct().as('m'))
          .select(sql<number>`coalesce(sum(m.size), 0)`.as('n')).as('media_bytes')
      ])
      .orderBy('s.created_at')
      .execute()
    return {
      success: true as const,
      data: {
        database: { file, bytes: fileSize(file), walBytes: fileSize(`${file}-wal`) },
        uploads: { count: Number(uploads.count), bytes: Number(uploads.bytes) },
        sessions: rows.map((r) => ({
          sessionId: r.id,
          statuses: Number(r.statuses ?? 0),
          viewers: Number(r.viewers ?? 0),
          authStateRows: Number(r.auth),
          mediaFiles: Number(r.media_files ?? 0),
          mediaBytes: Number(r.media_bytes ?? 0)
        }))
      }
    }
  })
}

function fileSize (path: string): number {
  try { return statSync(path).size } catch { return 0 }
}

export default routes
