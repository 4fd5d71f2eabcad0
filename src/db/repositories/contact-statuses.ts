import type { Kysely } from 'kysely'
import type { ContactStatusRow, Database } from '../database.js'

// Queries on `contact_statuses` (migration 015): the statuses the session's contacts posted, kept 24 hours.
// The same on SQLite and PostgreSQL.

type Db = Kysely<Database>

export type NewContactStatus = Omit<ContactStatusRow, 'seq' | 'session_id' | 'received_at' | 'viewed_at'>

/**
 * Records a contact's status; the row when it is new, undefined when the message id was recorded before (a
 * redelivery: the row as first read stays, even when this copy could not be decrypted).
 */
export async function recordContactStatus (db: Db, sessionId: string, s: NewContactStatus, now: number): Promise<ContactStatusRow | undefined> {
  return await db.insertInto('contact_statuses')
    .values({ ...s, session_id: sessionId, received_at: now, viewed_at: null })
    .onConflict((oc) => oc.columns(['session_id', 'message_id']).doNothing())
    .returningAll()
    .executeTakeFirst()
}

/** One page, newest first: `limit` rows arrived before the row `before` (its seq; undefined: from the newest). */
export async function contactStatusPage (
  db: Db, sessionId: string, q: { limit: number, before: number | undefined, since: number }
): Promise<ContactStatusRow[]> {
  let query = db.selectFrom('contact_statuses').selectAll()
    .where('session_id', '=', sessionId).where('posted_at', '>=', q.since)
  if (q.before !== undefined) query = query.where('seq', '<', q.before)
  return await query.orderBy('seq', 'desc').limit(q.limit).execute()
}

export async function findContactStatus (db: Db, sessionId: string, messageId: string): Promise<ContactStatusRow | undefined> {
  return await db.selectFrom('contact_statuses').selectAll().where('session_id', '=', sessionId).where('message_id', '=', messageId).executeTakeFirst()
}

/** The read receipt went out: the first time is kept. */
export async function markContactStatusViewed (db: Db, sessionId: string, messageId: string, at: number): Promise<void> {
  await db.updateTable('contact_statuses').set({ viewed_at: at })
    .where('session_id', '=', sessionId).where('message_id', '=', messageId).where('viewed_at', 'is', null)
    .execute()
}

/** Removes contacts' statuses posted before `cutoff` (every session); how many per session. */
export async function expireContactStatuses (db: Db, cutoff: number): Promise<Map<string, number>> {
  const rows = await db.deleteFrom('contact_statuses').where('posted_at', '<', cutoff).returning('session_id').execute()
  const counts = new Map<string, number>()
  for (const r of rows) counts.set(r.session_id, (counts.get(r.session_id) ?? 0) + 1)
  return counts
}

/** A LID is now known to be this number: its statuses get it. */
export async function mapContactStatusLids (db: Db, sessionId: string, mappings: ReadonlyArray<{ lid: string, number: string }>): Promise<void> {
  for (const { lid, number } of mappings) {
    await db.updateTable('contact_statuses').set({ from_number: number })
      .where('session_id', '=', sessionId).where('from_lid', '=', lid).where('from_number', 'is', null)
      .execute()
  }
}
