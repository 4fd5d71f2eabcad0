import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { SQLite } from '../../src/db/sqlite/driver.js'
import { Kysely, Migrator, SqliteDialect } from 'kysely'
import { openDatabase } from '../../src/db/connection.js'
import { migrationProvider } from '../../src/db/migrations/index.js'

test('002-viewer-lids keeps the viewers 001 stored, keyed by number, and down goes back', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-migrations-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = join(dir, 'db.sqlite')
  const sqlite = new SQLite(file)
  sqlite.pragma('foreign_keys = ON')
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: sqlite }) })
  const migrator = new Migrator({ db, provider: migrationProvider })
  assert.equal((await migrator.migrateTo('001-initial')).error, undefined)
  sqlite.exec(`insert into sessions (id, name, auth_method, created_at) values ('s', 's', 'qrcode', 1);
    insert into statuses (session_id, type, content, message_id, created_at, contact_count) values ('s', 'text', 'x', 'M1', 1, 1);
    insert into viewers (status_id, number, jid, viewed_at, is_real) values (1, '15550000001', '15550000001@s.whatsapp.net', 5, 1), (1, '15550000002', '15550000002@s.whatsapp.net', 7, 0);`)
  await db.destroy()

  const handle = await openDatabase(file) // migrates to the latest
  const rows = handle.sqlite.prepare('select status_id, viewer, number, jid, viewed_at, is_real from viewers order by viewer').all()
  assert.deepEqual(rows, [
    { status_id: 1, viewer: '15550000001', number: '15550000001', jid: '15550000001@s.whatsapp.net', viewed_at: 5, is_real: 1 },
    { status_id: 1, viewer: '15550000002', number: '15550000002', jid: '15550000002@s.whatsapp.net', viewed_at: 7, is_real: 0 }
  ])
  handle.sqlite.prepare("insert into viewers (status_id, viewer, number, jid, viewed_at) values (1, '123@lid', null, '123@lid', 9)").run()
  assert.throws(() => handle.sqlite.prepare("insert into viewers (status_id, viewer, number, jid, viewed_at) values (1, 'x', '15550000003', 'x', 9)").run(), /CHECK/)
  assert.deepEqual(handle.sqlite.pragma('foreign_key_check'), [])
  handle.sqlite.prepare('delete from statuses').run()
  assert.equal(handle.sqlite.prepare('select count(*) from viewers').pluck().get(), 0, 'viewers still cascade with their status')
  const down = await new Migrator({ db: handle.db, provider: migrationProvider }).migrateTo('001-initial')
  assert.equal(down.error, undefined)
  assert.deepEqual(handle.sqlite.prepare('select name from pragma_table_info(\'viewers\')').pluck().all(), ['status_id', 'number', 'jid', 'viewed_at', 'is_real'])
  await handle.close()
})

test('002 runs on a database that already ran 004 (migrations from parallel branches merge in any order)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-migrations-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = join(dir, 'db.sqlite')
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new SQLite(file) }) })
  const all = await migrationProvider.getMigrations()
  const without002 = { getMigrations: async () => Object.fromEntries(Object.entries(all).filter(([name]) => name !== '002-viewer-lids')) }
  assert.equal((await new Migrator({ db, provider: without002 }).migrateToLatest()).error, undefined)
  await db.destroy()
  const handle = await openDatabase(file)
  assert.ok(handle.sqlite.prepare('select name from pragma_table_info(\'viewers\')').pluck().all().includes('viewer'))
  await handle.close()
})

test('005-reactions: reactions and replies keyed per status, gone with their status; down drops them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-migrations-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const handle = await openDatabase(join(dir, 'db.sqlite'))
  const { sqlite } = handle
  sqlite.exec(`insert into sessions (id, name, auth_method, created_at) values ('s', 's', 'qrcode', 1);
    insert into statuses (session_id, type, content, message_id, created_at, contact_count) values ('s', 'text', 'x', 'M1', 1, 1);
    insert into status_reactions (status_id, reactor, number, jid, emoji, reacted_at, message_id) values (1, '1555', '1555', '1555@s.whatsapp.net', 'x', 1, 'R1');
    insert into status_replies (status_id, message_id, replier, number, jid, text, replied_at, received_at) values (1, 'P1', '1555', '1555', '1555@s.whatsapp.net', 'hi', 1, 1);`)
  assert.throws(() => sqlite.prepare("insert into status_reactions (status_id, reactor, jid, emoji, reacted_at, message_id) values (1, '1555', 'j', 'y', 2, 'R2')").run(), /UNIQUE|PRIMARY/)
  assert.throws(() => sqlite.prepare("insert into status_replies (status_id, message_id, replier, jid, text, replied_at, received_at) values (1, 'P1', 'x', 'j', 't', 1, 1)").run(), /UNIQUE|PRIMARY/)
  sqlite.prepare('delete from statuses').run()
  assert.equal(sqlite.prepare('select (select count(*) from status_reactions) + (select count(*) from status_replies)').pluck().get(), 0)
  // down to 004 (006-cluster, merged after, goes too)
  assert.equal((await new Migrator({ db: handle.db, provider: migrationProvider }).migrateTo('004-webhooks')).error, undefined)
  assert.equal(sqlite.prepare("select count(*) from sqlite_master where name in ('status_reactions', 'status_replies')").pluck().get(), 0)
  await handle.close()
})
