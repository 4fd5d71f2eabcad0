import type { Kysely } from 'kysely'
import { autoId, int } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Insights (issue 32): what stays of a status once it expires (or is deleted without `forget`), for
// INSIGHTS_RETENTION_DAYS. `insight_statuses` holds one summary per status (its counts, time to first view
// and median time to view); `insight_recipients` one line per recipient of it (the per-status report's
// lines: delivered, viewed, reacted, how many replies). The summary is written in the transaction that
// deletes the status, so a status is counted once: live from its rows, or from its summary. `posted_at` is
// copied onto the recipient lines so range scans (session, posted_at) need no join.
export async function up (db: Kysely<unknown>): Promise<void> {
  const integer = int(db)
  await db.schema.createTable('insight_statuses')
    // never reused: SQLite's AUTOINCREMENT, PostgreSQL's identity
    .addColumn('id', ...autoId(db))
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    // the former statuses.id
    .addColumn('status_id', integer, (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('caption_length', integer, (c) => c.notNull())
    // 'numbers' (targetNumbers chose the recipients), else the audience snapshot's type: list, contacts, phone, saved
    .addColumn('audience_kind', 'text', (c) => c.notNull())
    .addColumn('audience_id', 'text')
    .addColumn('audience_name', 'text')
    .addColumn('audience_size', integer, (c) => c.notNull())
    .addColumn('posted_at', integer, (c) => c.notNull())
    .addColumn('summarised_at', integer, (c) => c.notNull())
    .addColumn('recipients', integer, (c) => c.notNull())
    .addColumn('delivered', integer, (c) => c.notNull())
    .addColumn('viewed', integer, (c) => c.notNull())
    .addColumn('reacted', integer, (c) => c.notNull())
    .addColumn('replied', integer, (c) => c.notNull())
    // null when nobody viewed it
    .addColumn('first_view_ms', integer)
    .addColumn('median_view_ms', integer)
    .execute()
  await db.schema.createIndex('insight_statuses_status').on('insight_statuses').columns(['session_id', 'status_id']).unique().execute()
  await db.schema.createIndex('insight_statuses_posted').on('insight_statuses').columns(['session_id', 'posted_at']).execute()
  await db.schema.createTable('insight_recipients')
    .addColumn('insight_id', integer, (c) => c.notNull().references('insight_statuses.id').onDelete('cascade'))
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('posted_at', integer, (c) => c.notNull())
    // digits, or `<lid>@lid` when no number is known
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('delivered_at', integer)
    .addColumn('viewed_at', integer)
    .addColumn('reacted', integer, (c) => c.notNull())
    .addColumn('replies', integer, (c) => c.notNull())
    .addPrimaryKeyConstraint('insight_recipients_pk', ['insight_id', 'recipient'])
    .execute()
  // viewed_at last: views by hour and time to view read it from the index alone
  await db.schema.createIndex('insight_recipients_posted').on('insight_recipients').columns(['session_id', 'posted_at', 'viewed_at']).execute()
  await db.schema.createIndex('insight_recipients_recipient').on('insight_recipients').columns(['session_id', 'recipient']).execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('insight_recipients').ifExists().execute()
  await db.schema.dropTable('insight_statuses').ifExists().execute()
}
