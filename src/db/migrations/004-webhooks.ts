import { sql, type Kysely } from 'kysely'
import { autoId, int } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
export async function up (db: Kysely<unknown>): Promise<void> {
  const integer = int(db)
  await db.schema.createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull())
    // JSON array of event names; null means every event
    .addColumn('events', 'text')
    .addColumn('session_id', 'text')
    .addColumn('description', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('enabled', integer, (c) => c.notNull().defaultTo(1))
    .addColumn('disabled_reason', 'text')
    .addColumn('created_at', integer, (c) => c.notNull())
    .addColumn('updated_at', integer, (c) => c.notNull())
    .execute()

  // the outbox: one row per (event, endpoint), written when the event is emitted
  await db.schema.createTable('webhook_deliveries')
    .addColumn('id', ...autoId(db))
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text')
    // deliveries with the same key go out one after another, in id order
    .addColumn('order_key', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'sending', 'succeeded', 'failed')`))
    .addColumn('attempts', integer, (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', integer, (c) => c.notNull())
    .addColumn('last_attempt_at', integer)
    .addColumn('last_status_code', integer)
    .addColumn('last_error', 'text')
    .addColumn('created_at', integer, (c) => c.notNull())
    .addColumn('completed_at', integer)
    .execute()
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute()
  await db.schema.createIndex('webhook_deliveries_order').on('webhook_deliveries').columns(['webhook_id', 'order_key', 'id']).execute()
  await db.schema.createIndex('webhook_deliveries_list').on('webhook_deliveries').columns(['webhook_id', 'id']).execute()
  await db.schema.createIndex('webhook_deliveries_created').on('webhook_deliveries').column('created_at').execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').ifExists().execute()
  await db.schema.dropTable('webhooks').ifExists().execute()
}
