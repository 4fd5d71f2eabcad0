import { PostgresAdapter, sql, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely } from 'kysely'

// The few places where the same migration needs different words on SQLite and PostgreSQL. On SQLite
// every helper gives exactly what the migrations wrote before PostgreSQL support, so existing SQLite
// databases (and their migration names) are unchanged; the schema test compares it.

export function isPostgres (db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter
}

/** SQLite's INTEGER is 64-bit; PostgreSQL's `integer` is not (times are milliseconds), so `bigint` there. */
export function int (db: Kysely<unknown>): 'integer' | 'bigint' {
  return isPostgres(db) ? 'bigint' : 'integer'
}

/** Binary column: `blob` / `bytea`. */
export function blob (db: Kysely<unknown>): 'blob' | 'bytea' {
  return isPostgres(db) ? 'bytea' : 'blob'
}

/** `id integer primary key autoincrement` on SQLite; an identity column on PostgreSQL. */
export function autoId (db: Kysely<unknown>): [type: 'integer' | 'bigint', build: (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder] {
  return isPostgres(db)
    ? ['bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity()]
    : ['integer', (c) => c.primaryKey().autoIncrement()]
}

/** SQLite's `without rowid` (a clustered primary key); PostgreSQL has no such option. */
export function withoutRowid<T extends string, C extends string> (db: Kysely<unknown>, table: CreateTableBuilder<T, C>): CreateTableBuilder<T, C> {
  return isPostgres(db) ? table : table.modifyEnd(sql`without rowid`)
}
