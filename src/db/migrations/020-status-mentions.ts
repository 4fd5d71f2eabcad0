import type { Kysely } from 'kysely'
import { int } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Status mentions and group statuses (issue 39). `statuses.mentions`: the numbers a sent status mentions
// (comma-separated digits, '' when none; send-status `mentions`). `contact_statuses.mentions_me`: 1 when a
// contact's status mentions the account; `group_jid` / `group_subject`: a group status' group (null for a status
// to status@broadcast; the subject null while unknown).
export async function up (db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('statuses').addColumn('mentions', 'text', (c) => c.notNull().defaultTo('')).execute()
  await db.schema.alterTable('contact_statuses').addColumn('mentions_me', int(db), (c) => c.notNull().defaultTo(0)).execute()
  await db.schema.alterTable('contact_statuses').addColumn('group_jid', 'text').execute()
  await db.schema.alterTable('contact_statuses').addColumn('group_subject', 'text').execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('contact_statuses').dropColumn('group_subject').execute()
  await db.schema.alterTable('contact_statuses').dropColumn('group_jid').execute()
  await db.schema.alterTable('contact_statuses').dropColumn('mentions_me').execute()
  await db.schema.alterTable('statuses').dropColumn('mentions').execute()
}
