import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { Kysely, Migrator, SqliteDialect } from 'kysely'
import { migrationProvider } from '../../src/db/migrations/index.js'
import { SQLite } from '../../src/db/sqlite/driver.js'

// Migrations 001-004 became dialect-neutral (PostgreSQL) after they shipped: on SQLite they must still
// build exactly the schema they built before, statement for statement (the fixture was dumped from them
// before the change), so existing databases and new ones stay alike.
test('migrations 001-004 build the same SQLite schema as before they learned PostgreSQL', async () => {
  const sqlite = new SQLite(':memory:')
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: sqlite }) })
  const all = await migrationProvider.getMigrations()
  const shipped = ['001-initial', '002-viewer-lids', '003-send-progress', '004-webhooks']
  const provider = { getMigrations: async () => Object.fromEntries(shipped.map((name) => [name, all[name]])) }
  const { error } = await new Migrator({ db, provider }).migrateToLatest()
  assert.equal(error, undefined)
  const rows = sqlite.prepare("select type, name, tbl_name, sql from sqlite_master where name not like 'sqlite_%' and name not like 'kysely_%' order by type, name").all()
  const expected: unknown = JSON.parse(readFileSync(new URL('fixtures/sqlite-schema.json', import.meta.url), 'utf8'))
  assert.deepEqual(rows, expected)
  await db.destroy()
})
