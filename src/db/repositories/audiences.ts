import type { Insertable, Kysely } from 'kysely'
import type { AudienceRow, AudienceTable, Database } from '../database.js'

// Queries on `audiences` (saved audiences, issue 24); the same on SQLite and PostgreSQL. An audience's
// numbers are one column, read and written whole: lists leave it out.

type Db = Kysely<Database>

export type AudienceInfo = Omit<AudienceRow, 'numbers'>

const INFO_COLUMNS = ['seq', 'id', 'session_id', 'name', 'number_count', 'created_at', 'updated_at'] as const satisfies ReadonlyArray<keyof AudienceInfo>

export async function insertAudience (db: Db, row: Omit<Insertable<AudienceTable>, 'seq'>): Promise<void> {
  await db.insertInto('audiences').values(row).execute()
}

/** A saved audience's numbers, as stored (comma-separated). */
export function numbersOf (row: Pick<AudienceRow, 'numbers'>): string[] {
  return row.numbers === '' ? [] : row.numbers.split(',')
}

/** One audience of the session, with its numbers. */
export async function findAudience (db: Db, sessionId: string, id: string): Promise<AudienceRow | undefined> {
  return await db.selectFrom('audiences').selectAll().where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
}

/** One audience of the session, without its numbers. */
export async function findAudienceInfo (db: Db, sessionId: string, id: string): Promise<AudienceInfo | undefined> {
  return await db.selectFrom('audiences').select(INFO_COLUMNS).where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
}

/** The session's audiences after `afterSeq`, oldest first, without their numbers; one more than `limit` tells there is a next page. */
export async function listAudiences (db: Db, sessionId: string, q: { limit: number, after?: number }): Promise<AudienceInfo[]> {
  return await db.selectFrom('audiences').select(INFO_COLUMNS)
    .where('session_id', '=', sessionId)
    .where('seq', '>', q.after ?? 0)
    .orderBy('seq')
    .limit(q.limit)
    .execute()
}

export async function updateAudience (db: Db, sessionId: string, id: string, patch: Partial<Pick<AudienceTable, 'name' | 'numbers' | 'number_count'>>, now: number): Promise<boolean> {
  const r = await db.updateTable('audiences').set({ ...patch, updated_at: now }).where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
  return Number(r.numUpdatedRows) > 0
}

export async function deleteAudience (db: Db, sessionId: string, id: string): Promise<boolean> {
  const r = await db.deleteFrom('audiences').where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
  return Number(r.numDeletedRows) > 0
}
