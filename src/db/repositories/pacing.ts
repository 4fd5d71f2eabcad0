import type { Kysely } from 'kysely'
import type { Database } from '../database.js'

/** A session's posts since `since` (ms), oldest first: when each was made and how many recipients it had. */
export async function postsSince (db: Kysely<Database>, sessionId: string, since: number): Promise<Array<{ created_at: number, contact_count: number }>> {
  return await db.selectFrom('statuses').select(['created_at', 'contact_count'])
    .where('session_id', '=', sessionId)
    .where('created_at', '>', since)
    .orderBy('created_at')
    .execute()
}
