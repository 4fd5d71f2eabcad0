import { sql, type Kysely } from 'kysely'
import { isPostgres } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Audio statuses (issue 31): `statuses.type` and `uploads.kind` accept 'audio'. Both are CHECK constraints
// of 001. PostgreSQL replaces them in place. SQLite cannot alter a CHECK constraint, so each table is rebuilt
// the way SQLite documents it ("Making Other Kinds Of Table Schema Changes", sqlite.org/lang_altertable.html):
// foreign keys off, a new table from the current definition with the wider check, rows copied, the old one
// dropped, the new one renamed, its indexes re-created, foreign_key_check, foreign keys back on. The current
// definition (with every column later migrations added) is read from sqlite_master, so nothing else changes.

const STATUS_TYPES = { before: "('text', 'image', 'video', 'url')", after: "('text', 'image', 'video', 'audio', 'url')" }
const UPLOAD_KINDS = { before: "('image', 'video')", after: "('image', 'video', 'audio')" }

export async function up (db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) {
    await replaceCheckPg(db, 'statuses', 'type', STATUS_TYPES.after)
    await replaceCheckPg(db, 'uploads', 'kind', UPLOAD_KINDS.after)
    return
  }
  await withoutForeignKeys(db, async () => {
    await rebuildSqlite(db, 'statuses', `type in ${STATUS_TYPES.before}`, `type in ${STATUS_TYPES.after}`)
    await rebuildSqlite(db, 'uploads', `kind in ${UPLOAD_KINDS.before}`, `kind in ${UPLOAD_KINDS.after}`)
  })
}

export async function down (db: Kysely<unknown>): Promise<void> {
  // audio rows cannot stay under the narrower checks (their viewers and owners go with them by cascade)
  await sql`delete from statuses where type = 'audio'`.execute(db)
  await sql`delete from uploads where kind = 'audio'`.execute(db)
  if (isPostgres(db)) {
    await replaceCheckPg(db, 'statuses', 'type', STATUS_TYPES.before)
    await replaceCheckPg(db, 'uploads', 'kind', UPLOAD_KINDS.before)
    return
  }
  await withoutForeignKeys(db, async () => {
    await rebuildSqlite(db, 'statuses', `type in ${STATUS_TYPES.after}`, `type in ${STATUS_TYPES.before}`)
    await rebuildSqlite(db, 'uploads', `kind in ${UPLOAD_KINDS.after}`, `kind in ${UPLOAD_KINDS.before}`)
  })
}

/** PostgreSQL names a column's inline check `<table>_<column>_check`: dropped and added again with the new list. */
async function replaceCheckPg (db: Kysely<unknown>, table: string, column: string, list: string): Promise<void> {
  const name = `${table}_${column}_check`
  await sql`alter table ${sql.table(table)} drop constraint ${sql.ref(name)}, add constraint ${sql.ref(name)} check (${sql.ref(column)} in ${sql.raw(list)})`.execute(db)
}

/** Runs `step` with SQLite's foreign keys off (they cannot change inside a transaction), then restores the setting. */
async function withoutForeignKeys (db: Kysely<unknown>, step: () => Promise<void>): Promise<void> {
  const { rows } = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db)
  const was = rows[0]?.foreign_keys === 1
  await sql`pragma foreign_keys = off`.execute(db)
  try {
    await step()
  } finally {
    if (was) await sql`pragma foreign_keys = on`.execute(db)
  }
}

/** Rebuilds one SQLite table with `from` replaced by `to` in its definition, keeping rows, indexes and its AUTOINCREMENT counter. */
async function rebuildSqlite (db: Kysely<unknown>, table: string, from: string, to: string): Promise<void> {
  const temp = `${table}_015`
  const schema = await sql<{ type: string, name: string, sql: string | null }>`
    select type, name, sql from sqlite_master where tbl_name = ${table}`.execute(db)
  const definition = schema.rows.find((r) => r.type === 'table')?.sql
  if (typeof definition !== 'string' || !definition.includes(from)) throw new Error(`016-audio: ${table} has no check "${from}" to widen`)
  if (schema.rows.some((r) => r.type === 'trigger' || r.type === 'view')) throw new Error(`016-audio: ${table} has triggers; rebuild them too`)
  const indexes = schema.rows.filter((r) => r.type === 'index' && r.sql !== null).map((r) => r.sql as string)
  const created = definition.replace(from, to).replace(/^create table\s+("?)[A-Za-z_]+\1/i, `create table "${temp}"`)
  await db.transaction().execute(async (trx) => {
    const seq = await sql<{ seq: number }>`select seq from sqlite_sequence where name = ${table}`.execute(trx).catch(() => ({ rows: [] }))
    await sql.raw(created).execute(trx)
    await sql`insert into ${sql.table(temp)} select * from ${sql.table(table)}`.execute(trx)
    await sql`drop table ${sql.table(table)}`.execute(trx)
    await sql`alter table ${sql.table(temp)} rename to ${sql.table(table)}`.execute(trx)
    for (const index of indexes) await sql.raw(index).execute(trx)
    // ids are never reused, not even those of deleted rows: the counter continues where it was
    if (seq.rows[0] !== undefined) {
      await sql`delete from sqlite_sequence where name = ${table}`.execute(trx)
      await sql`insert into sqlite_sequence (name, seq) values (${table}, ${seq.rows[0].seq})`.execute(trx)
    }
    const broken = await sql`pragma foreign_key_check`.execute(trx)
    if (broken.rows.length > 0) throw new Error(`016-audio: rebuilding ${table} broke ${broken.rows.length} foreign keys`)
  })
}
