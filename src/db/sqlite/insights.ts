import { sql } from 'kysely'
import type { InsightBackend } from '../stores/insights.js'

/** Insights on SQLite: live rows through json_each; one writer, so an expiry needs no lock. */
export const insightBackend: InsightBackend = {
  live: (json, columns) =>
    sql`select ${sql.join(columns.map(([c]) => sql`json_extract(value, ${'$.' + c}) as ${sql.ref(c)}`))} from json_each(${json})`,
  // the planner, without statistics, prefers the (session, posted_at) range and a sort: told which index to walk
  delayIndex: sql`insight_recipients indexed by insight_recipients_delay`,
  lockExpiring: async () => {}
}
