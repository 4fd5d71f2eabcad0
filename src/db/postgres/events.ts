import { sql, type Kysely } from 'kysely'
import type { Database } from '../database.js'
import { insertEvents, type NewEvent } from '../stores/events.js'

// The event log on PostgreSQL: every appending transaction takes one advisory lock first and holds it to its
// commit, so ids are allocated and committed one transaction after another, cluster-wide (stores/events.ts).

/** pg_advisory_xact_lock key of the event log: "evtlog" in ASCII */
export const EVENT_LOG_LOCK = 0x6576746c6f67

/** `data`'s statusId (recentlyViewed) */
export const STATUS_ID_OF_DATA = sql<string>`(data::json ->> 'statusId')`

/** Appends inside the caller's Kysely transaction, under the log's lock (held to the commit). */
export async function appendEvents (trx: Kysely<Database>, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return
  await sql`select pg_advisory_xact_lock(${EVENT_LOG_LOCK})`.execute(trx)
  await insertEvents(trx, events)
}
