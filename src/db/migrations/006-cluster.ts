import type { Kysely } from 'kysely'

// Frozen: never edit a migration that has shipped; add a new one instead.
// Several nodes on one database (cluster mode): who is alive, and which node owns which session.
// Times are milliseconds since the epoch by the database's clock (bigint: they outgrow a 32-bit integer).
export async function up (db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('nodes')
    .addColumn('node_id', 'text', (c) => c.primaryKey())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    // the heartbeat: a node not seen for a lease's lifetime is not given sessions
    .addColumn('last_seen', 'bigint', (c) => c.notNull())
    .execute()

  // one row per session: its owner until expires_at, unless the owner renews it first
  await db.schema.createTable('session_leases')
    .addColumn('session_id', 'text', (c) => c.primaryKey().references('sessions.id').onDelete('cascade'))
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('acquired_at', 'bigint', (c) => c.notNull())
    // what the owner last reported of the connection (connecting, open, close, logged-out), for other nodes' reads
    .addColumn('status', 'text')
    .execute()
  await db.schema.createIndex('session_leases_node').on('session_leases').columns(['node_id', 'expires_at']).execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('session_leases').ifExists().execute()
  await db.schema.dropTable('nodes').ifExists().execute()
}
