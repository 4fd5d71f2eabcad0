import type { Kysely } from 'kysely'
import { int } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
// Who is sending a webhook delivery, and until when (PostgreSQL, several nodes on one outbox): a node
// starting again puts back only its own interrupted deliveries, and a delivery whose claim ran out (its
// node died) is claimed again by any node. Null on rows claimed before this migration and on SQLite.
export async function up (db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('claimed_by', 'text').execute()
  await db.schema.alterTable('webhook_deliveries').addColumn('claimed_until', int(db)).execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').dropColumn('claimed_until').execute()
  await db.schema.alterTable('webhook_deliveries').dropColumn('claimed_by').execute()
}
