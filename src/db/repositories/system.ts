import type SQLite from 'better-sqlite3'
import { sql, type Kysely } from 'kysely'
import type { DbHandle } from '../connection.js'
import type { Database } from '../database.js'

// Database-wide reads: the totals behind /stats and /storage, and the change counter.

type Db = Kysely<Database>

export interface StatusTotals {
  /** statuses created at or after `since` in any state (what sent-statuses lists) */
  statuses: number
  /** creation time of the newest of them, null when none */
  lastCreatedAt: number | null
  /** viewers other than the accounts themselves */
  realViewers: number
}

/** `sessionIds`: only those sessions' statuses (a scoped key's view); absent: every session. */
export async function statusTotals (db: Db, since = 0, sessionIds?: readonly string[]): Promise<StatusTotals> {
  if (sessionIds?.length === 0) return { statuses: 0, lastCreatedAt: null, realViewers: 0 }
  let statuses = db.selectFrom('statuses')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.max('created_at').as('last')])
    .where('created_at', '>=', since)
  if (sessionIds !== undefined) statuses = statuses.where('session_id', 'in', sessionIds)
  const totals = await statuses.executeTakeFirstOrThrow()
  let real = db.selectFrom('viewers').select((eb) => eb.fn.countAll<number>().as('count')).where('is_real', '=', 1)
  if (sessionIds !== undefined) real = real.where('status_id', 'in', (eb) => eb.selectFrom('statuses').select('id').where('session_id', 'in', sessionIds))
  const viewers = await real.executeTakeFirstOrThrow()
  return {
    statuses: Number(totals.count),
    lastCreatedAt: totals.last === null ? null : Number(totals.last),
    realViewers: Number(viewers.count)
  }
}

export async function uploadTotals (db: Db): Promise<{ count: number, bytes: number }> {
  const row = await db.selectFrom('uploads')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.coalesce(eb.fn.sum<number>('size'), sql<number>`0`).as('bytes')])
    .executeTakeFirstOrThrow()
  return { count: Number(row.count), bytes: Number(row.bytes) }
}

export interface SessionStorage {
  sessionId: string
  statuses: number
  viewers: number
  authStateRows: number
  mediaFiles: number
  mediaBytes: number
}

/** What each session holds in the database and the upload folder, oldest session first. */
export async function storageBySession (db: Db): Promise<SessionStorage[]> {
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
  return rows.map((r) => ({
    sessionId: r.id,
    statuses: Number(r.statuses ?? 0),
    viewers: Number(r.viewers ?? 0),
    authStateRows: Number(r.auth),
    mediaFiles: Number(r.media_files ?? 0),
    mediaBytes: Number(r.media_bytes ?? 0)
  }))
}

/** PostgreSQL only: the database's size on disk. */
export async function postgresDatabaseBytes (db: Db): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select pg_database_size(current_database()) as n`.execute(db)
  return Number(rows[0].n)
}

/** A real round trip through the database (for /api/health). */
export async function ping (db: Db): Promise<void> {
  await sql`select 1`.execute(db)
}

/** A real round trip through the database (for /api/health), prepared once. */
export function pingStatement (sqlite: SQLite.Database): () => void {
  const ping = sqlite.prepare('select 1')
  return () => { ping.get() }
}

/** Every session and whether it has been linked to an account (its platform connection is the platform's to tell). */
export function sessionLinkStatesStatement (sqlite: SQLite.Database): () => Array<{ id: string, linked: boolean }> {
  const rows = sqlite.prepare<[], { id: string, linked: number }>('select id, linked from sessions order by created_at')
  return () => rows.all().map((r) => ({ id: r.id, linked: r.linked === 1 }))
}

/**
 * Like `changeStamp`, for a hot path: this connection's writes (`total_changes()`, which reads nothing)
 * move it at once, other connections' (`data_version`, a read of the database: 5–25 µs on a busy VM, as
 * any statement that opens a read transaction) within `everyMs`.
 */
export function lightChangeStamp (sqlite: SQLite.Database, everyMs = 250): () => string {
  const own = sqlite.prepare<[], number>('select total_changes()').pluck()
  const others = sqlite.prepare<[], number>('select data_version from pragma_data_version').pluck()
  let version = 0
  let readAt = -Infinity
  return () => {
    const now = performance.now()
    if (now - readAt >= everyMs) {
      version = others.get()!
      readAt = now
    }
    return `${own.get()!}:${version}`
  }
}

/**
 * A stamp that moves on every write to the database, by this connection (total_changes) or another
 * (data_version): equal stamps mean nothing changed in between.
 */
export function changeStamp (sqlite: SQLite.Database): () => string {
  const changes = sqlite.prepare<[], { c: number, v: number }>('select total_changes() as c, data_version as v from pragma_data_version')
  return () => { const { c, v } = changes.get()!; return `${c}:${v}` }
}

/**
 * The dialect's change stamp. PostgreSQL has no cheap database-wide change counter, and other nodes write
 * too: every call there gives a new stamp, so nothing is served from a cache (each read is a query).
 */
export function changeStampFor (handle: DbHandle): () => string {
  if (handle.dialect === 'sqlite') return changeStamp(handle.sqlite)
  let n = 0
  return () => `pg:${++n}`
}

/** Every session and whether it has been linked to an account, through Kysely (PostgreSQL's path). */
export async function sessionLinkStates (db: Db): Promise<Array<{ id: string, linked: boolean }>> {
  const rows = await db.selectFrom('sessions').select(['id', 'linked']).orderBy('created_at').execute()
  return rows.map((r) => ({ id: r.id, linked: r.linked === 1 }))
}
