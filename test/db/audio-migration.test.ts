import assert from 'node:assert/strict'
import { Migrator, sql } from 'kysely'
import { migrationProvider } from '../../src/db/migrations/index.js'
import { sqliteOf } from '../helper.js'
import { dialectTest, openTestDb } from '../support/db-matrix.js'

// 016-audio widens two CHECK constraints of 001 (statuses.type, uploads.kind) to accept 'audio'. PostgreSQL
// replaces them in place; SQLite rebuilds both tables: rows, their children (viewers cascade from statuses,
// key_uploads from uploads), indexes and the status id counter must come through unchanged.

dialectTest('016-audio: statuses and uploads accept audio; existing rows, children and ids are kept; down removes audio rows', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const { db } = handle
  const migrator = new Migrator({ db, provider: migrationProvider, allowUnorderedMigrations: true })
  assert.equal((await migrator.migrateTo('014-audiences')).error, undefined)
  const now = Date.now()
  await db.insertInto('sessions').values({ id: 's', name: 's', auth_method: 'qrcode', phone_number: null, own_number: null, own_lid: null, created_at: now }).execute()
  const status = (id: number, type: 'text' | 'audio', messageId: string) => ({
    id, session_id: 's', type, content: 'x', caption: '', message_id: messageId, state: 'sent' as const, created_at: now, contact_count: 1,
    target_numbers: '', media_file: null, background_color: null, font: null, error: null
  })
  await db.insertInto('statuses').values([status(1, 'text', 'M1'), status(7, 'text', 'M7')]).execute()
  await db.insertInto('viewers').values({ status_id: 1, viewer: '1555', number: '1555', jid: '1555@s.whatsapp.net', viewed_at: now, is_real: 1 }).execute()
  await db.insertInto('uploads').values({ filename: 'a.png', kind: 'image', mime_type: 'image/png', size: 1, created_at: now }).execute()
  await db.deleteFrom('statuses').where('id', '=', 7).execute()
  // before 016 audio is refused
  await assert.rejects(db.insertInto('statuses').values(status(8, 'audio', 'M8')).execute(), /check/i)
  await assert.rejects(db.insertInto('uploads').values({ filename: 'b.ogg', kind: 'audio', mime_type: 'audio/ogg', size: 1, created_at: now }).execute(), /check/i)
  if (dialect === 'postgres') await sql`select setval(pg_get_serial_sequence('statuses', 'id'), 7)`.execute(db)

  assert.equal((await migrator.migrateToLatest()).error, undefined)
  assert.deepEqual((await db.selectFrom('statuses').select(['id', 'message_id']).execute()).map((r) => [r.id, r.message_id]), [[1, 'M1']])
  assert.equal((await db.selectFrom('viewers').select('viewer').execute()).length, 1)
  const { id: audioId } = await db.insertInto('statuses').values({ ...status(0, 'audio', 'M9'), id: undefined }).returning('id').executeTakeFirstOrThrow()
  assert.equal(audioId, 8, 'the id counter continues after the highest id ever used (7, deleted), none is reused')
  await db.insertInto('uploads').values({ filename: 'b.ogg', kind: 'audio', mime_type: 'audio/ogg; codecs=opus', size: 1, created_at: now }).execute()
  await assert.rejects(db.insertInto('statuses').values(status(20, 'gif' as 'text', 'M20')).execute(), /check/i, 'still a check')
  await assert.rejects(db.insertInto('statuses').values(status(21, 'text', 'M1')).execute(), /unique/i, 'the indexes came through')
  if (handle.dialect === 'sqlite') {
    const sqlite = sqliteOf(handle)
    assert.deepEqual(sqlite.pragma('foreign_key_check'), [])
    assert.equal(sqlite.pragma('foreign_keys', { simple: true }), 1, 'foreign keys are on again')
    assert.deepEqual(sqlite.prepare("select name from sqlite_master where type = 'index' and tbl_name in ('statuses', 'uploads') and sql is not null order by name").pluck().all(),
      ['statuses_created', 'statuses_media', 'statuses_message', 'statuses_session_created', 'uploads_created'])
  }
  await db.deleteFrom('statuses').where('id', '=', 1).execute()
  assert.equal((await db.selectFrom('viewers').select('viewer').execute()).length, 0, 'viewers still cascade with their status')

  assert.equal((await migrator.migrateTo('014-audiences')).error, undefined)
  assert.deepEqual(await db.selectFrom('statuses').select('id').execute(), [], 'down removes audio statuses')
  assert.deepEqual((await db.selectFrom('uploads').select('filename').execute()).map((r) => r.filename), ['a.png'])
  assert.equal((await migrator.migrateToLatest()).error, undefined)
})
