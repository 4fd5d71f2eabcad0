import { sql, type Kysely } from 'kysely'
import { autoId, int } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// What the linked phone shares with the session (issue 24): its saved contacts (app-state sync, one row per
// contact the phone's address book holds, keyed by the id the phone gave it) and its status privacy (who its
// statuses go to: every saved contact, all but a list, or only a list). Kept current from the platform;
// removed with the session.
export async function up (db: Kysely<unknown>): Promise<void> {
  const integer = int(db)
  await db.schema.createTable('phone_contacts')
    .addColumn('id', ...autoId(db))
    .addColumn('session_id', 'text', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    // the contact's id on the phone: `<number>@s.whatsapp.net`, or `<lid>@lid` for a contact known by its LID only
    .addColumn('jid', 'text', (c) => c.notNull())
    // digits; null for a LID-only contact
    .addColumn('number', 'text')
    // `<lid>@lid`; null while the phone gave none
    .addColumn('lid', 'text')
    .addColumn('name', 'text')
    .addColumn('updated_at', integer, (c) => c.notNull())
    .execute()
  await db.schema.createIndex('phone_contacts_jid').on('phone_contacts').columns(['session_id', 'jid']).unique().execute()
  // pages in id order
  await db.schema.createIndex('phone_contacts_page').on('phone_contacts').columns(['session_id', 'id']).execute()

  await db.schema.createTable('phone_status_privacy')
    .addColumn('session_id', 'text', (c) => c.primaryKey().references('sessions.id').onDelete('cascade'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('contacts', 'allowlist', 'denylist')`))
    // JSON array: the list of the mode (digits, or `<lid>@lid` for a LID with no known number); [] for contacts
    .addColumn('numbers', 'text', (c) => c.notNull())
    .addColumn('updated_at', integer, (c) => c.notNull())
    .execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('phone_status_privacy').ifExists().execute()
  await db.schema.dropTable('phone_contacts').ifExists().execute()
}
