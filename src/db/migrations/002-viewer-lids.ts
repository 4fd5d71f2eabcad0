import { sql, type Kysely } from 'kysely'
import { int, isPostgres, withoutRowid } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Views by a LID whose number is not known yet are kept: viewers are keyed by (status_id, viewer), where
// `viewer` is the number when known, else the LID (`<lid>@lid`; digits and LIDs cannot collide). `number`
// becomes nullable; `jid` is `<number>@s.whatsapp.net`, or the LID while the number is unknown.
export async function up (db: Kysely<unknown>): Promise<void> {
  const integer = int(db)
  // PostgreSQL names constraints per schema: the old key gives its name up first
  if (isPostgres(db)) await sql`alter table viewers rename constraint viewers_pk to viewers_v1_pk`.execute(db)
  await withoutRowid(db, db.schema.createTable('viewers_v2')
    .addColumn('status_id', integer, (c) => c.notNull().references('statuses.id').onDelete('cascade'))
    .addColumn('viewer', 'text', (c) => c.notNull())
    .addColumn('number', 'text')
    .addColumn('jid', 'text', (c) => c.notNull())
    .addColumn('viewed_at', integer, (c) => c.notNull())
    .addColumn('is_real', integer, (c) => c.notNull().defaultTo(1))
    .addPrimaryKeyConstraint('viewers_pk', ['status_id', 'viewer'])
    .addCheckConstraint('viewers_key', sql`number is null or viewer = number`))
    .execute()
  await sql`insert into viewers_v2 (status_id, viewer, number, jid, viewed_at, is_real)
            select status_id, number, number, jid, viewed_at, is_real from viewers`.execute(db)
  await db.schema.dropTable('viewers').execute()
  await sql`alter table viewers_v2 rename to viewers`.execute(db)
  // the rows still waiting for a number, by LID (small: only unmapped views are in it)
  await db.schema.createIndex('viewers_unmapped').on('viewers').column('viewer').where(sql.ref('number'), 'is', null).execute()
}

export async function down (db: Kysely<unknown>): Promise<void> {
  const integer = int(db)
  if (isPostgres(db)) await sql`alter table viewers rename constraint viewers_pk to viewers_v2_pk`.execute(db)
  await withoutRowid(db, db.schema.createTable('viewers_v1')
    .addColumn('status_id', integer, (c) => c.notNull().references('statuses.id').onDelete('cascade'))
    .addColumn('number', 'text', (c) => c.notNull())
    .addColumn('jid', 'text', (c) => c.notNull())
    .addColumn('viewed_at', integer, (c) => c.notNull())
    .addColumn('is_real', integer, (c) => c.notNull().defaultTo(1))
    .addPrimaryKeyConstraint('viewers_pk', ['status_id', 'number']))
    .execute()
  await sql`insert into viewers_v1 (status_id, number, jid, viewed_at, is_real)
            select status_id, number, jid, viewed_at, is_real from viewers where number is not null`.execute(db)
  await db.schema.dropTable('viewers').execute()
  await sql`alter table viewers_v1 rename to viewers`.execute(db)
}
