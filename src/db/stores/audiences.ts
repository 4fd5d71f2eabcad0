import type { Kysely } from 'kysely'
import type { AudienceRow, Database } from '../database.js'

// Saved audiences (issue 24, migration 014). The same queries on SQLite and PostgreSQL. An audience's numbers
// are one column (comma-separated), read and written whole; lists leave it out.

/** An audience without its numbers. */
export type AudienceInfo = Omit<AudienceRow, 'numbers'>
/** An audience with its numbers, in the order given. */
export type SavedAudience = AudienceInfo & { numbers: string[] }
export type NewAudience = Omit<AudienceInfo, 'seq' | 'number_count'> & { numbers: readonly string[] }

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

const INFO_COLUMNS = ['seq', 'id', 'session_id', 'name', 'number_count', 'created_at', 'updated_at'] as const satisfies ReadonlyArray<keyof AudienceInfo>

const numbersOf = (column: string): string[] => column === '' ? [] : column.split(',')

export function audienceStore (db: Kysely<Database>): AudienceStore {
  return {
    async insert (a) {
      await db.insertInto('audiences').values({ ...a, numbers: a.numbers.join(','), number_count: a.numbers.length }).execute()
    },

    async find (sessionId, id) {
      const row = await db.selectFrom('audiences').selectAll().where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
      return row === undefined ? undefined : { ...row, numbers: numbersOf(row.numbers) }
    },

    async findInfo (sessionId, id) {
      return await db.selectFrom('audiences').select(INFO_COLUMNS).where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
    },

    async list (sessionId, q) {
      return await db.selectFrom('audiences').select(INFO_COLUMNS)
        .where('session_id', '=', sessionId)
        .where('seq', '>', q.after ?? 0)
        .orderBy('seq')
        .limit(q.limit)
        .execute()
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
