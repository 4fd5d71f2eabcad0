import type { Kysely } from 'kysely'
import { autoId, int } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// The account's own answers to its contacts' statuses (issue 39): a like (an E2EE reaction to
// status@broadcast) and replies (1:1 messages quoting the status). Each row hangs off the status it answers
// (`contact_statuses.seq`, cascade): when the status expires or its session goes, its answers go with it.
// A like is one row per status (taken back: the row is removed); a reply is recorded only once the platform
// acknowledged it, so there is never a half-written one.
export async function up (db: Kysely<unknown>): Promise<void> {
  const integer = int(db)
  const [idType] = autoId(db)
  await db.schema.createTable('contact_status_likes')
    .addColumn('status_seq', idType, (c) => c.primaryKey().references('contact_statuses.seq').onDelete('cascade'))
    // the reaction's text as sent
    .addColumn('emoji', 'text', (c) => c.notNull())
    // the platform's message id of the reaction
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('liked_at', integer, (c) => c.notNull())
    .execute()
  await db.schema.createTable('contact_status_replies')
    .addColumn('seq', ...autoId(db))
    .addColumn('status_seq', idType, (c) => c.notNull().references('contact_statuses.seq').onDelete('cascade'))
    // the platform's message id of the reply
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('sent_at', integer, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('contact_status_replies_status').on('contact_status_replies').columns(['status_seq', 'seq']).execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('contact_status_replies').ifExists().execute()
  await db.schema.dropTable('contact_status_likes').ifExists().execute()
}
