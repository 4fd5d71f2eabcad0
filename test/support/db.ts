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

/**
 * Per status: the counts its row keeps (migration 019) and the same recounted from the rows (what the list
 * counted per request before), in plain SQL both dialects run, so a raw client (a read-only SQLite handle on a
 * killed service's file, a pg.Client) can run it too; `countMismatches` reads its rows.
 */
export const KEPT_AND_RECOUNTED = `select s.id, s.viewer_count as kept_viewers, s.reaction_count as kept_reactions, s.reply_count as kept_replies,
  (select count(*) from viewers v where v.status_id = s.id and v.is_real = 1) as viewers,
  (select count(*) from status_reactions r where r.status_id = s.id and r.emoji <> '') as reactions,
  (select count(*) from status_replies p where p.status_id = s.id) as replies
  from statuses s order by s.id`

type CountRow = Record<'id' | 'kept_viewers' | 'kept_reactions' | 'kept_replies' | 'viewers' | 'reactions' | 'replies', number | string | bigint>

/** The statuses whose kept counts differ from the recount, in words (none: []). */
export function countMismatches (rows: unknown[]): string[] {
  return (rows as CountRow[]).flatMap((r) => (['viewers', 'reactions', 'replies'] as const)
    .filter((k) => Number(r[`kept_${k}`]) !== Number(r[k]))
    .map((k) => `status ${String(r.id)}: ${k} kept ${String(r[`kept_${k}`])}, recounted ${String(r[k])}`))
}

async function countRows (db: Kysely<Database>): Promise<CountRow[]> {
  return (await sql.raw<CountRow>(KEPT_AND_RECOUNTED).execute(db)).rows
}

/** What the statuses rows keep (migration 019's columns). */
export async function keptCounts (db: Kysely<Database>): Promise<StatusCounts> {
  return Object.fromEntries((await countRows(db)).map((r) => [Number(r.id), [Number(r.kept_viewers), Number(r.kept_reactions), Number(r.kept_replies)]]))
}

/** The same counts recounted from the rows. */
export async function recountedCounts (db: Kysely<Database>): Promise<StatusCounts> {
  return Object.fromEntries((await countRows(db)).map((r) => [Number(r.id), [Number(r.viewers), Number(r.reactions), Number(r.replies)]]))
}
