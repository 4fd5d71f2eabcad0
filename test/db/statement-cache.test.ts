import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Kysely, SqliteDialect, sql } from 'kysely'
import { SQLite } from '../../src/db/sqlite/driver.js'
import { cachedStatements } from '../../src/db/sqlite/statement-cache.js'

// Kysely's SQLite driver prepares every query's text again; src/db/sqlite/statement-cache.ts keeps them prepared
// (issue 41). A kept statement must answer as a fresh one would, and never be handed out while it streams.

function counted (): { sqlite: InstanceType<typeof SQLite>, selects: () => number } {
  const sqlite = new SQLite(':memory:')
  const texts: string[] = []
  const prepare = sqlite.prepare.bind(sqlite)
  sqlite.prepare = ((text: string) => { texts.push(text); return prepare(text) }) as typeof sqlite.prepare
  return { sqlite, selects: () => texts.filter((x) => x.startsWith('select')).length }
}

test('statement cache: one statement per SQL text, the same rows, the oldest text dropped past the bound', async (t) => {
  const { sqlite, selects } = counted()
  const db = new Kysely<{ t: { n: number } }>({ dialect: new SqliteDialect({ database: cachedStatements(sqlite, 2) }) })
  t.after(async () => { await db.destroy() })
  await sql`create table t (n integer)`.execute(db)
  for (const n of [1, 2, 3]) await db.insertInto('t').values({ n }).execute()
  const select = async (): Promise<number[]> => (await db.selectFrom('t').select('n').orderBy('n').execute()).map((r) => r.n)
  assert.deepEqual(await select(), [1, 2, 3])
  await db.insertInto('t').values({ n: 4 }).execute()
  assert.deepEqual(await select(), [1, 2, 3, 4])
  assert.equal(selects(), 1, 'the second run reused the statement')

  // two other texts after it: the select is the oldest and is dropped (bound 2)
  await db.selectFrom('t').select('n').where('n', '=', 1).execute()
  await db.selectFrom('t').select('n').where('n', '>', 1).execute()
  assert.deepEqual(await select(), [1, 2, 3, 4])
  assert.equal(selects(), 4, 'prepared again once dropped')
})

test('statement cache: a statement still iterating is not handed out again', () => {
  const { sqlite, selects } = counted()
  const cache = cachedStatements(sqlite)
  sqlite.exec('create table t (n integer); insert into t values (1), (2)')
  const first = cache.prepare('select n from t order by n')
  const rows = first.iterate([])
  assert.deepEqual(rows.next().value, { n: 1 })
  const second = cache.prepare('select n from t order by n')
  assert.notEqual(second, first)
  assert.deepEqual(second.all([]), [{ n: 1 }, { n: 2 }])
  assert.deepEqual(rows.next().value, { n: 2 })
  rows.return?.()
  assert.equal(cache.prepare('select n from t order by n'), first, 'the kept one again once done')
  assert.equal(selects(), 2)
  cache.close()
})
