import { sql, type Kysely } from 'kysely'
import type { Database } from '../database.js'

// Database-wide reads: the totals behind /stats and /storage, and the round trip behind /api/health.

type Db = Kysely<Database>

export interface StatusTotals {
  /** statuses created at or after `since` in any state (what sent-statuses lists) */
  statuses: number
  /** creation time of the newest of them, null when none */
  lastCreatedAt: number | null
  /** viewers other than the accounts themselves */
  realViewers: number
}

export interface SessionStorage {
  sessionId: string
  statuses: number
  viewers: number
  authStateRows: number
  mediaFiles: number
  mediaBytes: number
}

/** Where the data lives and how much room it takes (PostgreSQL: as the server counts it; WAL is the server's). */
export interface DatabaseSize { file: string, bytes: number, walBytes: number }

export interface SystemStore {
  /** a real round trip through the database (for /api/health) */
  ping: () => Promise<void>
  /** `sessionIds`: only those sessions' statuses (a scoped key's view); absent: every session */
  statusTotals: (since?: number, sessionIds?: readonly string[]) => Promise<StatusTotals>
  /** reactions (current) and replies to statuses created at or after `since`; `sessionIds` as for statusTotals */
  interactionTotals: (since?: number, sessionIds?: readonly string[]) => Promise<{ reactions: number, replies: number }>
  uploadTotals: () => Promise<{ count: number, bytes: number }>
  /** what each session holds in the database and the upload folder, oldest session first */
  storageBySession: () => Promise<SessionStorage[]>
  databaseSize: () => Promise<DatabaseSize>
  /** every session and whether it has been linked to an account (its connection is the platform's to tell) */
  sessionLinkStates: () => Promise<Array<{ id: string, linked: boolean }>>
}

/** The queries both backends run the same; `databaseSize` is the backend's (the file, or the server's count). */
export function systemStore (db: Db, databaseSize: () => Promise<DatabaseSize>): SystemStore {
  return {
    async ping () { await sql`select 1`.execute(db) },
    statusTotals: async (since = 0, sessionIds) => await statusTotals(db, since, sessionIds),
    interactionTotals: async (since = 0, sessionIds) => await interactionTotals(db, since, sessionIds),
    uploadTotals: async () => await uploadTotals(db),
    storageBySession: async () => await storageBySession(db),
    databaseSize,
    async sessionLinkStates () {
      const rows = await db.selectFrom('sessions').select(['id', 'linked']).orderBy('created_at').execute()
      return rows.map((r) => ({ id: r.id, linked: r.linked === 1 }))
    }
  }
}

async function statusTotals (db: Db, since: number, sessionIds?: readonly string[]): Promise<StatusTotals> {
  if (sessionIds?.length === 0) return { statuses: 0, lastCreatedAt: null, realViewers: 0 }
  let statuses = db.selectFrom('statuses')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.max('created_at').as('last')])
    .where('created_at', '>=', since)
  if (sessionIds !== undefined) statuses = statuses.where('session_id', 'in', sessionIds)
  let real = db.selectFrom('viewers').select((eb) => eb.fn.countAll<number>().as('count')).where('is_real', '=', 1)
  if (sessionIds !== undefined) real = real.where('status_id', 'in', (eb) => eb.selectFrom('statuses').select('id').where('session_id', 'in', sessionIds))
  // both asked at once: each waits its turn on a busy database once, not one after the other (GET /api/stats)
  const [totals, viewers] = await Promise.all([statuses.executeTakeFirstOrThrow(), real.executeTakeFirstOrThrow()])
  return {
    statuses: Number(totals.count),
    lastCreatedAt: totals.last === null ? null : Number(totals.last),
    realViewers: Number(viewers.count)
  }
}

async function interactionTotals (db: Db, since: number, sessionIds?: readonly string[]): Promise<{ reactions: number, replies: number }> {
  if (sessionIds?.length === 0) return { reactions: 0, replies: 0 }
  let reacted = db.selectFrom('status_reactions as r').innerJoin('statuses as s', 's.id', 'r.status_id')
    .select((eb) => eb.fn.countAll<number>().as('n')).where('r.emoji', '<>', '').where('s.created_at', '>=', since)
  if (sessionIds !== undefined) reacted = reacted.where('s.session_id', 'in', sessionIds)
  let replied = db.selectFrom('status_replies as r').innerJoin('statuses as s', 's.id', 'r.status_id')
    .select((eb) => eb.fn.countAll<number>().as('n')).where('s.created_at', '>=', since)
  if (sessionIds !== undefined) replied = replied.where('s.session_id', 'in', sessionIds)
  const [reactions, replies] = await Promise.all([reacted.executeTakeFirstOrThrow(), replied.executeTakeFirstOrThrow()])
  return { reactions: Number(reactions.n), replies: Number(replies.n) }
}

async function uploadTotals (db: Db): Promise<{ count: number, bytes: number }> {
  const row = await db.selectFrom('uploads')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.coalesce(eb.fn.sum<number>('size'), sql<number>`0`).as('bytes')])
    .executeTakeFirstOrThrow()
  return { count: Number(row.count), bytes: Number(row.bytes) }
}

async function storageBySession (db: Db): Promise<SessionStorage[]> {
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
