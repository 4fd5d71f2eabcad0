import type { Kysely } from 'kysely'
import type { AudienceRow, Database } from '../database.js'

// Saved audiences (issue 24, migration 014). The same queries on SQLite and PostgreSQL. An audience's numbers
// are one column (comma-separated), read and written whole; lists leave it out.

/** An audience without its numbers (the port's own type; plugins never see the table's row). */
export interface AudienceInfo {
  /** creation order (the list's cursor) */
  seq: number
  /** `aud_` + random */
  id: string
  sessionId: string
  name: string
  numberCount: number
  createdAt: number
  updatedAt: number
}
/** An audience with its numbers, in the order given. */
export interface SavedAudience extends AudienceInfo { numbers: string[] }
export interface NewAudience {
  id: string
  sessionId: string
  name: string
  /** digits, validated and de-duplicated, in the order given */
  numbers: readonly string[]
  createdAt: number
  updatedAt: number
}

/** The one row → AudienceInfo mapping, for both backends. */
export function toAudienceInfo (r: Omit<AudienceRow, 'numbers'>): AudienceInfo {
  return {
    seq: Number(r.seq),
    id: r.id,
    sessionId: r.session_id,
    name: r.name,
    numberCount: Number(r.number_count),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at)
  }
}

export interface AudienceStore {
  insert: (audience: NewAudience) => Promise<void>
  /** one audience of the session, with its numbers */
  find: (sessionId: string, id: string) => Promise<SavedAudience | undefined>
  /** one audience of the session, without its numbers */
  findInfo: (sessionId: string, id: string) => Promise<AudienceInfo | undefined>
  /** the session's audiences after `after` (seq), oldest first, at most `limit`, without their numbers */
  list: (sessionId: string, q: { limit: number, after?: number }) => Promise<AudienceInfo[]>
  /** changes the name, the numbers (replaced whole) or both; false: no such audience */
  update: (sessionId: string, id: string, patch: { name?: string, numbers?: readonly string[] }, now: number) => Promise<boolean>
  /** false: no such audience */
  remove: (sessionId: string, id: string) => Promise<boolean>
}

const INFO_COLUMNS = ['seq', 'id', 'session_id', 'name', 'number_count', 'created_at', 'updated_at'] as const satisfies ReadonlyArray<keyof AudienceRow>

const numbersOf = (column: string): string[] => column === '' ? [] : column.split(',')

export function audienceStore (db: Kysely<Database>): AudienceStore {
  return {
    async insert (a) {
      await db.insertInto('audiences').values({
        id: a.id, session_id: a.sessionId, name: a.name, numbers: a.numbers.join(','), number_count: a.numbers.length, created_at: a.createdAt, updated_at: a.updatedAt
      }).execute()
    },

    async find (sessionId, id) {
      const row = await db.selectFrom('audiences').selectAll().where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
      return row === undefined ? undefined : { ...toAudienceInfo(row), numbers: numbersOf(row.numbers) }
    },

    async findInfo (sessionId, id) {
      const row = await db.selectFrom('audiences').select(INFO_COLUMNS).where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
      return row === undefined ? undefined : toAudienceInfo(row)
    },

    async list (sessionId, q) {
      const rows = await db.selectFrom('audiences').select(INFO_COLUMNS)
        .where('session_id', '=', sessionId)
        .where('seq', '>', q.after ?? 0)
        .orderBy('seq')
        .limit(q.limit)
        .execute()
      return rows.map(toAudienceInfo)
    },

    async update (sessionId, id, patch, now) {
      const changes = {
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.numbers !== undefined ? { numbers: patch.numbers.join(','), number_count: patch.numbers.length } : {})
      }
      const r = await db.updateTable('audiences').set({ ...changes, updated_at: now }).where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
      return Number(r.numUpdatedRows) > 0
    },

    async remove (sessionId, id) {
      const r = await db.deleteFrom('audiences').where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
      return Number(r.numDeletedRows) > 0
    }
  }
}
