import type { Kysely } from 'kysely'

// Frozen: never edit a migration that has shipped; add a new one instead.
// Recipients a status could not be sent to: an LID-migrated account posts to LIDs, and numbers the
// platform knows no LID for are left out (docs/platform.md). Comma-separated digits; '' when none.
export async function up (db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('statuses').addColumn('unreachable', 'text', (c) => c.notNull().defaultTo('')).execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('statuses').dropColumn('unreachable').execute()
}
