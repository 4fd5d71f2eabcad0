import type { Kysely } from 'kysely'
import { autoId, int } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Contacts' statuses (issue 30): what the account's contacts post, as the platform delivers it (a `<status>`
// stanza), kept for its 24 hours (the status expiry cleanup removes older ones). One row per (session,
// message id): a redelivered stanza is a no-op. Pages go newest first by `seq`. `media_ref` is what
// downloading the media takes (its platform key among it: never sent out by the API); no media is kept.
export async function up (db: Kysely<unknown>): Promise<void> {
  const integer = int(db)
  await db.schema.createTable('contact_statuses')
    .addColumn('seq', ...autoId(db))
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('message_id', 'text', (c) => c.notNull())
    // who posted, as the stanza named them (device dropped): `<lid>@lid` or `<number>@s.whatsapp.net`
    .addColumn('from_jid', 'text', (c) => c.notNull())
    .addColumn('from_lid', 'text')
    // digits; null while a LID is not mapped
    .addColumn('from_number', 'text')
    // text, image, video, audio, other, undecryptable
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('text', 'text')
    .addColumn('caption', 'text')
    .addColumn('mimetype', 'text')
    .addColumn('size', integer)
    .addColumn('media_ref', 'text')
    .addColumn('error', 'text')
    .addColumn('posted_at', integer, (c) => c.notNull())
    .addColumn('received_at', integer, (c) => c.notNull())
    // when the service sent its read receipt (POST …/view); null: never
    .addColumn('viewed_at', integer)
    .execute()
  await db.schema.createIndex('contact_statuses_message').on('contact_statuses').columns(['session_id', 'message_id']).unique().execute()
  await db.schema.createIndex('contact_statuses_page').on('contact_statuses').columns(['session_id', 'seq']).execute()
  await db.schema.createIndex('contact_statuses_posted').on('contact_statuses').column('posted_at').execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('contact_statuses').ifExists().execute()
}
