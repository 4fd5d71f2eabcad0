import { sql, type Kysely } from 'kysely'
import { blob, int, isPostgres, withoutRowid } from './dialect.js'

// A send has a recorded life (issue 11): `statuses.state` moves sending → sent | partial, the recipients
// the platform acknowledged are committed after each chunk (one row per JID in `status_recipients`),
// `sent_count` keeps their count in the API's terms, and `message_payload` keeps the message exactly as
// built (media uploaded) so an interrupted send can be resumed under the same id after a restart.
// Frozen once shipped: never edit; add a new migration instead.
export async function up (db: Kysely<unknown>): Promise<void> {
  const integer = int(db)
  await withoutRowid(db, db.schema.createTable('status_recipients')
    .addColumn('status_id', integer, (c) => c.notNull().references('statuses.id').onDelete('cascade'))
    .addColumn('jid', 'text', (c) => c.notNull())
    // 1: the platform acknowledged its chunk; 0: its chunk was written but the link closed before the ack
    // (it may have it: a revoke includes it, a resumed send sends it again)
    .addColumn('confirmed', integer, (c) => c.notNull().defaultTo(1))
    .addPrimaryKeyConstraint('status_recipients_pk', ['status_id', 'jid']))
    .execute()
  await db.schema.alterTable('statuses').addColumn('sent_count', integer, (c) => c.notNull().defaultTo(0)).execute()
  await db.schema.alterTable('statuses').addColumn('message_payload', blob(db)).execute()

  // rows written by 001's code: `recipients` held every JID of a sent status (own number first)
  if (isPostgres(db)) {
    // (a PostgreSQL database starts at the latest schema: there are no such rows; kept for equal meaning)
    await sql`insert into status_recipients (status_id, jid)
      select s.id, j.value from statuses s, json_array_elements_text(s.recipients::json) j
      where s.recipients like '[%' on conflict do nothing`.execute(db)
  } else {
    await sql`insert or ignore into status_recipients (status_id, jid)
      select s.id, j.value from statuses s, json_each(s.recipients) j
      where json_valid(s.recipients) and j.type = 'text'`.execute(db)
  }
  await sql`update statuses set sent_count = contact_count where state = 'sent'`.execute(db)
  // 001's code left a row `sending` forever when killed mid-send, without recording who had it: such a row
  // becomes `partial` with unknown recipients (listed, its viewers kept; a revoke reaches nobody)
  await sql`update statuses set state = 'partial',
    error = coalesce(error, 'Sending was interrupted before recipients were recorded; who has it is unknown')
    where state = 'sending'`.execute(db)
  // 001's code deleted failed rows; none should exist, but none may stay as a state nobody lists
  await sql`delete from statuses where state not in ('sent', 'partial')`.execute(db)
  await db.schema.alterTable('statuses').dropColumn('recipients').execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('statuses').addColumn('recipients', 'text', (c) => c.notNull().defaultTo('[]')).execute()
  const collect = isPostgres(db) ? sql`json_agg(r.jid)::text` : sql`json_group_array(r.jid)`
  await sql`update statuses set recipients = coalesce(
    (select ${collect} from status_recipients r where r.status_id = statuses.id), '[]')`.execute(db)
  await sql`update statuses set state = 'sent' where state = 'partial'`.execute(db)
  await db.schema.alterTable('statuses').dropColumn('message_payload').execute()
  await db.schema.alterTable('statuses').dropColumn('sent_count').execute()
  await db.schema.dropTable('status_recipients').execute()
}
