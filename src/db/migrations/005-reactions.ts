import { type Kysely } from 'kysely'
import { int } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Reactions and replies to statuses. Only the schema builder, text and integer columns and composite keys:
// the same migration runs on SQLite and PostgreSQL. Rows go with their status (cascade: delete, expiry).
// Like viewers, a contact the platform named by a LID whose number is not known yet is keyed by the LID
// (`number` null) and moves to the number when it becomes known.
export async function up (db: Kysely<unknown>): Promise<void> {
  // integer on SQLite (as shipped); bigint on PostgreSQL, whose integer is 32-bit (times are milliseconds)
  const integer = int(db)
  // one row per (status, contact): the latest reaction wins; an empty emoji (taken back) is kept as a
  // tombstone so an older reaction delivered late cannot bring it back
  await db.schema.createTable('status_reactions')
    .addColumn('status_id', integer, (c) => c.notNull().references('statuses.id').onDelete('cascade'))
    .addColumn('reactor', 'text', (c) => c.notNull())
    .addColumn('number', 'text')
    .addColumn('jid', 'text', (c) => c.notNull())
    .addColumn('emoji', 'text', (c) => c.notNull())
    .addColumn('reacted_at', integer, (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('status_reactions_pk', ['status_id', 'reactor'])
    .execute()
  await db.schema.createIndex('status_reactions_reactor').on('status_reactions').column('reactor').execute()

  // every reply; its platform message id makes a redelivery a no-op
  await db.schema.createTable('status_replies')
    .addColumn('status_id', integer, (c) => c.notNull().references('statuses.id').onDelete('cascade'))
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('replier', 'text', (c) => c.notNull())
    .addColumn('number', 'text')
    .addColumn('jid', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('replied_at', integer, (c) => c.notNull())
    // when the service took it: orders replies sent within the same second (the platform's times are seconds)
    .addColumn('received_at', integer, (c) => c.notNull())
    .addPrimaryKeyConstraint('status_replies_pk', ['status_id', 'message_id'])
    .execute()
  await db.schema.createIndex('status_replies_replier').on('status_replies').column('replier').execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('status_replies').ifExists().execute()
  await db.schema.dropTable('status_reactions').ifExists().execute()
}
