import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Migrator, sql } from 'kysely'
import { migrationProvider } from '../../src/db/migrations/index.js'
import { openTestDb, usePostgres } from '../support/db-matrix.js'

usePostgres()

// The same migrations on PostgreSQL: every integer column is bigint (millisecond times), ids are identity
// columns, the constraints hold, int8 values come back as numbers, and the migrations go down and up again.
test('the migrations build the schema on PostgreSQL, go down to nothing and up again', async (t) => {
  const handle = await openTestDb(t, 'postgres')
  const db = handle.db
  const columns = await sql<{ table_name: string, column_name: string, data_type: string }>`
    select table_name, column_name, data_type from information_schema.columns
    where table_schema = 'public' and table_name not like 'kysely%' order by table_name, ordinal_position`.execute(db)
  const types = new Map(columns.rows.map((c) => [`${c.table_name}.${c.column_name}`, c.data_type]))
  assert.equal(types.get('statuses.id'), 'bigint')
  assert.equal(types.get('statuses.created_at'), 'bigint')
  assert.equal(types.get('statuses.message_payload'), 'bytea')
  assert.equal(types.get('viewers.viewer'), 'text')
  assert.equal(types.get('webhook_deliveries.next_attempt_at'), 'bigint')
  assert.equal([...types.values()].includes('integer'), false, 'no 32-bit integer column')

  const now = Date.now()
  await db.insertInto('sessions').values({ id: 's', name: 's', auth_method: 'qrcode', phone_number: null, own_number: null, own_lid: null, created_at: now }).execute()
  const { id } = await db.insertInto('statuses').values({
    session_id: 's', type: 'text', content: 'x', caption: '', message_id: 'M1', state: 'sent', created_at: now, contact_count: 1,
    target_numbers: '', media_file: null, background_color: null, font: null, error: null, message_payload: Buffer.from([1, 2, 3])
  }).returning('id').executeTakeFirstOrThrow()
  assert.equal(typeof id, 'number')
  const row = await db.selectFrom('statuses').select(['created_at', 'message_payload']).where('id', '=', id).executeTakeFirstOrThrow()
  assert.equal(row.created_at, now, 'bigint read back as a number')
  assert.deepEqual(row.message_payload, Buffer.from([1, 2, 3]))
  await assert.rejects(db.insertInto('viewers').values({ status_id: id, viewer: 'x', number: '1555', jid: 'x', viewed_at: now, is_real: 1 }).execute(), /viewers_key/)
  await assert.rejects(db.insertInto('sessions').values({ id: 't', name: 't', auth_method: 'bad' as 'qrcode', phone_number: null, own_number: null, own_lid: null, created_at: now }).execute(), /check/)
  const count = await db.selectFrom('statuses').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  assert.equal(count.n, 1)
  await db.deleteFrom('sessions').execute()
  assert.equal((await db.selectFrom('statuses').selectAll().execute()).length, 0, 'statuses cascade with their session')

  const migrator = new Migrator({ db, provider: migrationProvider, allowUnorderedMigrations: true })
  assert.equal((await migrator.migrateTo('001-initial')).error, undefined)
  assert.equal((await migrator.migrateToLatest()).error, undefined)
  assert.ok((await db.selectFrom('viewers').select('viewer').execute()).length === 0)
})
