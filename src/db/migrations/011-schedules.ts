import { sql, type Kysely } from 'kysely'
import { autoId, int, withoutRowid } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Scheduled statuses (issue 24): a schedule holds a send-status body and when it runs next; each run is
// recorded once (unique per schedule and due time). A node takes a run by moving `next_run_at` on from the
// value it read (compare-and-set in one UPDATE): on one database only one node can, so a run fires once.
// Status deliveries: the platform's delivery receipts for statuses (one row per status and recipient, the
// earliest delivery kept), committed before the receipt is acknowledged, like views.
export async function up (db: Kysely<unknown>): Promise<void> {
  const integer = int(db)
  await db.schema.createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    // the send-status body, JSON
    .addColumn('body', 'text', (c) => c.notNull())
    // the upload it names (image/video): kept while the schedule exists
    .addColumn('media_file', 'text')
    .addColumn('first_at', integer, (c) => c.notNull())
    // the repeat rule, JSON; null: one run
    .addColumn('repeat', 'text')
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('active').check(sql`state in ('active', 'paused', 'done')`))
    // the next run's due time; null once no run is left
    .addColumn('next_run_at', integer)
    // pacing held the due run back until then (its lateness counts from here)
    .addColumn('deferred_until', integer)
    // runs recorded so far (fired, failed or missed), for `repeat.count`
    .addColumn('run_count', integer, (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', integer, (c) => c.notNull())
    .addColumn('updated_at', integer, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('schedules_due').on('schedules').columns(['state', 'next_run_at']).execute()
  await db.schema.createIndex('schedules_session').on('schedules').column('session_id').execute()
  await db.schema.createIndex('schedules_media').on('schedules').column('media_file').execute()

  await db.schema.createTable('schedule_runs')
    .addColumn('id', ...autoId(db))
    .addColumn('schedule_id', 'text', (c) => c.notNull().references('schedules.id').onDelete('cascade'))
    // the run's due time
    .addColumn('at', integer, (c) => c.notNull())
    .addColumn('fired_at', integer)
    // the status it posted (no foreign key: the status expires, the record stays)
    .addColumn('status_id', integer)
    // firing (taken, send under way), fired, failed, missed
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('late', integer, (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('node_id', 'text')
    .execute()
  await db.schema.createIndex('schedule_runs_at').on('schedule_runs').columns(['schedule_id', 'at']).unique().execute()

  await withoutRowid(db, db.schema.createTable('status_deliveries')
    .addColumn('status_id', integer, (c) => c.notNull().references('statuses.id').onDelete('cascade'))
    // the number when known, else the LID (`<lid>@lid`)
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('number', 'text')
    .addColumn('jid', 'text', (c) => c.notNull())
    .addColumn('delivered_at', integer, (c) => c.notNull())
    .addPrimaryKeyConstraint('status_deliveries_pk', ['status_id', 'recipient']))
    .execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('status_deliveries').ifExists().execute()
  await db.schema.dropTable('schedule_runs').ifExists().execute()
  await db.schema.dropTable('schedules').ifExists().execute()
}
