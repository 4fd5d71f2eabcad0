import type { Kysely } from 'kysely'
import { autoId, int } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
// The event log (issue 26): every event that reports a committed change is written here in the change's
// own transaction; its id is the event's `eventId` (commit order: SQLite has one writer, PostgreSQL
// allocates ids under a transaction-scoped advisory lock). Webhook deliveries are made from it after the
// commit, up to the `webhooks` cursor, which moves in the same transaction as the deliveries it wrote.
export async function up (db: Kysely<unknown>): Promise<void> {
  const integer = int(db)
  await db.schema.createTable('event_log')
    .addColumn('id', ...autoId(db))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text')
    .addColumn('created_at', integer, (c) => c.notNull())
    // the payload as JSON, without its eventId
    .addColumn('data', 'text', (c) => c.notNull())
    .execute()
  await db.schema.createIndex('event_log_created').on('event_log').column('created_at').execute()
  await db.schema.createIndex('event_log_session').on('event_log').columns(['session_id', 'id']).execute()

  // how far each consumer of the log has got (`webhooks`: deliveries written up to this id)
  await db.schema.createTable('event_cursors')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('last_id', integer, (c) => c.notNull())
    .execute()
  await db.insertInto('event_cursors' as never).values({ name: 'webhooks', last_id: 0 } as never).execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('event_cursors').ifExists().execute()
  await db.schema.dropTable('event_log').ifExists().execute()
}
