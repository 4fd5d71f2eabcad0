import type { Kysely } from 'kysely'
import { int } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
// Scoped API keys (the admin key stays API_KEY): only the SHA-256 of each key's secret is stored.
// A webhook created with a scoped key remembers that key: it receives only the key's sessions' events.
// An upload made with a scoped key is that key's: another scoped key cannot post it.
export async function up (db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    // hex SHA-256 of the secret part of `stk_<id>_<secret>`
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    // '*' (every session) or a JSON array of session ids
    .addColumn('sessions', 'text', (c) => c.notNull())
    // JSON array of 'read' | 'send' | 'manage'
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', int(db), (c) => c.notNull())
    .execute()
  await db.schema.alterTable('webhooks').addColumn('key_id', 'text').execute()
  // uploads made with a scoped key: only that key (or the admin key) may post them
  await db.schema.createTable('upload_owners')
    .addColumn('filename', 'text', (c) => c.primaryKey().references('uploads.filename').onDelete('cascade'))
    .addColumn('key_id', 'text', (c) => c.notNull())
    .execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('upload_owners').ifExists().execute()
  await db.schema.alterTable('webhooks').dropColumn('key_id').execute()
  await db.schema.dropTable('api_keys').ifExists().execute()
}
