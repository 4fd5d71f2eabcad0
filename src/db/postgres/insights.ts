import { sql } from 'kysely'
import type { InsightBackend } from '../stores/insights.js'

/** Insights on PostgreSQL: live rows through jsonb_to_recordset; an expiry locks the rows it summarises. */
export const insightBackend: InsightBackend = {
  live: (json, columns) =>
    sql`select * from jsonb_to_recordset(${json}::jsonb) as x(${sql.raw(columns.map(([c, t]) => `${c} ${t === 'int' ? 'bigint' : 'text'}`).join(', '))})`,
  delayIndex: sql`insight_recipients`,
  // PostgreSQL reads each statement at its own snapshot: without the lock a view committed between the
  // summary's reads and the expiry's delete would be acknowledged, then lost with its status. Locked, such
  // a commit waits for the expiry and fails its foreign key (not acknowledged: the platform sends it
  // again, and it is dropped like any receipt for a status no longer there). SQLite has one writer.
  lockExpiring: async (tx, before) => { await sql`select id from statuses where created_at < ${before} for update`.execute(tx) }
}
