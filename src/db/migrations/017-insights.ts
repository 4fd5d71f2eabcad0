import { sql, type Kysely } from 'kysely'
import { autoId, int, isPostgres } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Insights (issue 32): what stays of a status once it expires (or is deleted without `forget`), for
// INSIGHTS_RETENTION_DAYS. `insight_statuses` holds one summary per status (its counts, time to first view
// and median time to view); `insight_recipients` one line per recipient of it (the per-status report's
// lines: delivered, viewed, reacted, how many replies). The summary is written in the transaction that
// deletes the status, so a status is counted once: live from its rows, or from its summary. `posted_at` is
// copied onto the recipient lines so range scans (session, posted_at) need no join.
//
// Two things keep the insights call fast over hundreds of thousands of lines (bench/insights.ts):
// - `insight_view_buckets`: a summary's views counted per absolute quarter hour of viewing (floor(viewed_at /
//   900,000)) and quarter hour of time to view, kept by a trigger on every recipient line inserted with a view,
//   whoever writes it. Views by hour and weekday read these (a status is viewed within about a day: some
//   hundred rows each) instead of every line; so does a percentile's first step (which quarter hour of time
//   to view holds the rank).
// - `insight_recipients_delay`: the lines with a view ordered by time to view (the expression the store's
//   DELAY uses, word for word): a percentile's second step is an ordered offset within that quarter hour.
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
  await db.schema.createIndex('insight_recipients_posted').on('insight_recipients').columns(['session_id', 'posted_at']).execute()
  // covering: the per-contact figures group a session's lines by recipient reading the index alone
  // (bench/insights.ts: the contacts call's grouping 715 → 160 ms CPU over 450,000 lines)
  await db.schema.createIndex('insight_recipients_recipient').on('insight_recipients')
    .columns(['session_id', 'recipient', 'posted_at', 'delivered_at', 'viewed_at', 'reacted', 'replies']).execute()
  // covering: a percentile's ordered offset reads the index alone
  await sql`create index insight_recipients_delay on insight_recipients
    (session_id, (case when viewed_at > posted_at then viewed_at - posted_at else 0 end), posted_at, viewed_at) where viewed_at is not null`.execute(db)

  await db.schema.createTable('insight_view_buckets')
    .addColumn('insight_id', integer, (c) => c.notNull().references('insight_statuses.id').onDelete('cascade'))
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('posted_at', integer, (c) => c.notNull())
    // floor(viewed_at / 900,000): when
    .addColumn('bucket', integer, (c) => c.notNull())
    // floor(time to view / 900,000): how fast
    .addColumn('delay_bucket', integer, (c) => c.notNull())
    .addColumn('views', integer, (c) => c.notNull())
    .addPrimaryKeyConstraint('insight_view_buckets_pk', ['insight_id', 'bucket', 'delay_bucket'])
    .execute()
  await db.schema.createIndex('insight_view_buckets_posted').on('insight_view_buckets').columns(['session_id', 'posted_at', 'bucket', 'delay_bucket', 'views']).execute()
  const count = sql`insert into insight_view_buckets (insight_id, session_id, posted_at, bucket, delay_bucket, views)
    values (new.insight_id, new.session_id, new.posted_at, new.viewed_at / 900000,
      (case when new.viewed_at > new.posted_at then new.viewed_at - new.posted_at else 0 end) / 900000, 1)
    on conflict (insight_id, bucket, delay_bucket) do update set views = insight_view_buckets.views + 1`
  if (isPostgres(db)) {
    await sql`create function insight_count_view () returns trigger language plpgsql as $$
      begin ${count}; return null; end $$`.execute(db)
    await sql`create trigger insight_recipients_view after insert on insight_recipients
      for each row when (new.viewed_at is not null) execute function insight_count_view()`.execute(db)
  } else {
    await sql`create trigger insight_recipients_view after insert on insight_recipients
      for each row when new.viewed_at is not null begin ${count}; end`.execute(db)
  }
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('insight_view_buckets').ifExists().execute()
  await db.schema.dropTable('insight_recipients').ifExists().execute()
  if (isPostgres(db)) await sql`drop function if exists insight_count_view ()`.execute(db)
  await db.schema.dropTable('insight_statuses').ifExists().execute()
}
