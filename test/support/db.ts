import type { FastifyInstance } from 'fastify'
import { sql, type Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'
import type { DbHandle } from '../../src/db/connection.js'
import { DB_HANDLE } from '../../src/db/stores/index.js'

/**
 * The database connection of a built app, for a test that reads or arranges rows itself (Kysely in `.db`;
 * the raw driver by dialect). The service never sees it: it reaches data through `app.stores`.
 */
export function dbOf (app: FastifyInstance): DbHandle {
  const handle = (app as unknown as Record<symbol, DbHandle | undefined>)[DB_HANDLE]
  if (handle === undefined) throw new Error('this app has no database (the db plugin is not registered)')
  return handle
}

/** Per status id: its real viewers, standing reactions and replies. */
export type StatusCounts = Record<number, [viewers: number, reactions: number, replies: number]>

/** What the statuses rows keep (migration 019's columns). */
export async function keptCounts (db: Kysely<Database>): Promise<StatusCounts> {
  const rows = await db.selectFrom('statuses').select(['id', 'viewer_count', 'reaction_count', 'reply_count']).orderBy('id').execute()
  return Object.fromEntries(rows.map((r) => [r.id, [Number(r.viewer_count), Number(r.reaction_count), Number(r.reply_count)]]))
}

/** The same counts recounted from the rows (what the list counted per request before migration 019). */
export async function recountedCounts (db: Kysely<Database>): Promise<StatusCounts> {
  const { rows } = await sql<{ id: number, v: number, r: number, p: number }>`select s.id,
    (select count(*) from viewers v where v.status_id = s.id and v.is_real = 1) as v,
    (select count(*) from status_reactions r where r.status_id = s.id and r.emoji <> '') as r,
    (select count(*) from status_replies p where p.status_id = s.id) as p
    from statuses s order by s.id`.execute(db)
  return Object.fromEntries(rows.map((r) => [r.id, [Number(r.v), Number(r.r), Number(r.p)]]))
}
