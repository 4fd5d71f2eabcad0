import type { Kysely } from 'kysely'
import { autoId, int } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Audiences (issue 24). Saved audiences: a named list of numbers per session, read and written whole
// (comma-separated digits; at most 50,000), listed in creation order by `seq`. A status sent with an
// `audience` keeps a snapshot of it (JSON: type, saved audience or except list, the status_setting posted
// and the resolved recipients): who it was meant for, as the phone's contacts or the saved list were then.
export async function up (db: Kysely<unknown>): Promise<void> {
  const integer = int(db)
  await db.schema.createTable('audiences')
    .addColumn('seq', ...autoId(db))
    // `aud_` + random
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    // comma-separated digits, validated and de-duplicated, in the order given
    .addColumn('numbers', 'text', (c) => c.notNull())
    .addColumn('number_count', integer, (c) => c.notNull())
    .addColumn('created_at', integer, (c) => c.notNull())
    .addColumn('updated_at', integer, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('audiences_session').on('audiences').columns(['session_id', 'seq']).execute()
  // null: targetNumbers named the recipients (the seed's way)
  await db.schema.alterTable('statuses').addColumn('audience', 'text').execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('statuses').dropColumn('audience').execute()
  await db.schema.dropTable('audiences').ifExists().execute()
}
