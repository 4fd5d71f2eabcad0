import { sql, type Kysely } from 'kysely'
import { autoId, int, withoutRowid } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead. (The dialect helpers were the one
// exception: on SQLite they give the same schema as before; test/db/schema.test.ts checks it.)
export async function up (db: Kysely<unknown>): Promise<void> {
  const integer = int(db)
  await db.schema.createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('auth_method', 'text', (c) => c.notNull().check(sql`auth_method in ('pairing', 'qrcode')`))
    .addColumn('phone_number', 'text')
    .addColumn('own_number', 'text')
    .addColumn('own_lid', 'text')
    .addColumn('linked', integer, (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', integer, (c) => c.notNull())
    .execute()

  await db.schema.createTable('auth_creds')
    .addColumn('session_id', 'text', (c) => c.primaryKey().references('sessions.id').onDelete('cascade'))
    .addColumn('creds', 'text', (c) => c.notNull())
    .addColumn('updated_at', integer, (c) => c.notNull())
    .execute()

  await withoutRowid(db, db.schema.createTable('auth_keys')
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('auth_keys_pk', ['session_id', 'type', 'key_id']))
    .execute()

  await db.schema.createTable('statuses')
    .addColumn('id', ...autoId(db))
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('text', 'image', 'video', 'url')`))
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('caption', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('sending'))
    .addColumn('created_at', integer, (c) => c.notNull())
    .addColumn('contact_count', integer, (c) => c.notNull())
    .addColumn('target_numbers', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('recipients', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('media_file', 'text')
    .addColumn('background_color', 'text')
    .addColumn('font', integer)
    .addColumn('error', 'text')
    .execute()
  await db.schema.createIndex('statuses_session_created').on('statuses').columns(['session_id', 'created_at']).execute()
  await db.schema.createIndex('statuses_message').on('statuses').columns(['session_id', 'message_id']).unique().execute()
  await db.schema.createIndex('statuses_created').on('statuses').column('created_at').execute()
  await db.schema.createIndex('statuses_media').on('statuses').column('media_file').execute()

  await withoutRowid(db, db.schema.createTable('viewers')
    .addColumn('status_id', integer, (c) => c.notNull().references('statuses.id').onDelete('cascade'))
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('jid', 'text', (c) => c.notNull())
    .addColumn('viewed_at', integer, (c) => c.notNull())
    .addColumn('is_real', integer, (c) => c.notNull().defaultTo(1))
    .addPrimaryKeyConstraint('viewers_pk', ['status_id', 'number']))
    .execute()

  await db.schema.createTable('uploads')
    .addColumn('filename', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('image', 'video')`))
    .addColumn('mime_type', 'text', (c) => c.notNull())
    .addColumn('size', integer, (c) => c.notNull())
    .addColumn('created_at', integer, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('uploads_created').on('uploads').column('created_at').execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  for (const table of ['uploads', 'viewers', 'statuses', 'auth_keys', 'auth_creds', 'sessions']) {
    await db.schema.dropTable(table).ifExists().execute()
  }
}
