import { sql, type Kysely, type RawBuilder } from 'kysely'
import { int, isPostgres } from './dialect.js'

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// Counts kept, not counted (issue 41): the sent-statuses list counted each status's real viewers, current
// reactions and replies per request (a count(*) per status, so its cost grew with reach: 592 req/s against a
// plain Express peer's 4,055). The statuses row now holds the three counts, filled here from the rows, and
// triggers keep them in the statement (so the transaction) that inserts, merges, moves or deletes a row,
// whoever writes it: the receipt commit, a LID's mapping onto a number (the LID row deleted, the number's
// row inserted or kept: counted once), a reaction changed or taken back, a cascade.
// - viewer_count: viewers with is_real = 1 (the account's own devices are not counted)
// - reaction_count: reactions whose emoji is not '' (a taken-back reaction stays as '')
// - reply_count: replies
// SQLite fires its triggers per row (an update of the status row by its primary key, a few µs); PostgreSQL
// counts the receipt commit's and a cascade's viewers per statement from their transition tables, one update
// per status in id order (so two commits lock the rows they share in the same order); the rest per row.

const COUNTS = ['viewer_count', 'reaction_count', 'reply_count'] as const

/** The conditions a row is counted under, by table. */
const COUNTED = {
  viewers: { column: 'viewer_count', when: (row: string) => `${row}.is_real = 1`, columns: 'is_real, status_id' },
  status_reactions: { column: 'reaction_count', when: (row: string) => `${row}.emoji <> ''`, columns: 'emoji, status_id' },
  status_replies: { column: 'reply_count', when: (_row: string) => 'true', columns: 'status_id' }
} as const
type Counted = keyof typeof COUNTED

export async function up (db: Kysely<unknown>): Promise<void> {
  for (const column of COUNTS) {
    await db.schema.alterTable('statuses').addColumn(column, int(db), (c) => c.notNull().defaultTo(0)).execute()
  }
  await sql`update statuses set
    viewer_count = (select count(*) from viewers v where v.status_id = statuses.id and v.is_real = 1),
    reaction_count = (select count(*) from status_reactions r where r.status_id = statuses.id and r.emoji <> ''),
    reply_count = (select count(*) from status_replies p where p.status_id = statuses.id)`.execute(db)
  for (const table of Object.keys(COUNTED) as Counted[]) {
    if (isPostgres(db)) await postgresTriggers(db, table)
    else await sqliteTriggers(db, table)
  }
}

const raw = (text: string): RawBuilder<unknown> => sql.raw(text)

async function sqliteTriggers (db: Kysely<unknown>, table: Counted): Promise<void> {
  const { column, when, columns } = COUNTED[table]
  const bump = (sign: '+' | '-', row: 'new' | 'old'): string => `update statuses set ${column} = ${column} ${sign} 1 where id = ${row}.status_id;`
  await raw(`create trigger ${table}_count_insert after insert on ${table} for each row when ${when('new')} begin ${bump('+', 'new')} end`).execute(db)
  await raw(`create trigger ${table}_count_delete after delete on ${table} for each row when ${when('old')} begin ${bump('-', 'old')} end`).execute(db)
  // an update counts as the old row out and the new one in; only the columns the count depends on fire it
  await raw(`create trigger ${table}_count_update after update of ${columns} on ${table} for each row
    when (${when('old')}) <> (${when('new')}) or old.status_id <> new.status_id
    begin
      update statuses set ${column} = ${column} - 1 where id = old.status_id and ${when('old')};
      update statuses set ${column} = ${column} + 1 where id = new.status_id and ${when('new')};
    end`).execute(db)
}

async function postgresTriggers (db: Kysely<unknown>, table: Counted): Promise<void> {
  const { column, when, columns } = COUNTED[table]
  const fn = `${table}_count`
  // viewers: per statement (the receipt commit inserts a turn's views in one statement; a status's
  // deletion cascades to all of its viewers in one), one update per status in id order
  if (table === 'viewers') {
    const perStatement = (name: string, rows: string, sign: '+' | '-'): string => `create function ${name} () returns trigger language plpgsql as $$
      declare r record;
      begin
        for r in select status_id, count(*) as n from ${rows} as t where ${when('t')} group by status_id order by status_id loop
          update statuses set ${column} = ${column} ${sign} r.n where id = r.status_id;
        end loop;
        return null;
      end $$`
    await raw(perStatement(`${fn}_insert`, 'added', '+')).execute(db)
    await raw(perStatement(`${fn}_delete`, 'removed', '-')).execute(db)
    await raw(`create trigger ${table}_count_insert after insert on ${table} referencing new table as added for each statement execute function ${fn}_insert ()`).execute(db)
    await raw(`create trigger ${table}_count_delete after delete on ${table} referencing old table as removed for each statement execute function ${fn}_delete ()`).execute(db)
  } else {
    await raw(`create function ${fn}_insert () returns trigger language plpgsql as $$
      begin update statuses set ${column} = ${column} + 1 where id = new.status_id; return null; end $$`).execute(db)
    await raw(`create function ${fn}_delete () returns trigger language plpgsql as $$
      begin update statuses set ${column} = ${column} - 1 where id = old.status_id; return null; end $$`).execute(db)
    await raw(`create trigger ${table}_count_insert after insert on ${table} for each row when (${when('new')}) execute function ${fn}_insert ()`).execute(db)
    await raw(`create trigger ${table}_count_delete after delete on ${table} for each row when (${when('old')}) execute function ${fn}_delete ()`).execute(db)
  }
  // an update counts as the old row out and the new one in (per row: nothing on a hot path changes these columns)
  await raw(`create function ${fn}_update () returns trigger language plpgsql as $$
    begin
      update statuses set ${column} = ${column} - 1 where id = old.status_id and ${when('old')};
      update statuses set ${column} = ${column} + 1 where id = new.status_id and ${when('new')};
      return null;
    end $$`).execute(db)
  await raw(`create trigger ${table}_count_update after update of ${columns} on ${table} for each row
    when ((${when('old')}) is distinct from (${when('new')}) or old.status_id <> new.status_id) execute function ${fn}_update ()`).execute(db)
}

export async function down (db: Kysely<unknown>): Promise<void> {
  for (const table of Object.keys(COUNTED) as Counted[]) {
    for (const op of ['insert', 'delete', 'update']) {
      await raw(`drop trigger if exists ${table}_count_${op}${isPostgres(db) ? ` on ${table}` : ''}`).execute(db)
      if (isPostgres(db)) await raw(`drop function if exists ${table}_count_${op} ()`).execute(db)
    }
  }
  for (const column of COUNTS) await db.schema.alterTable('statuses').dropColumn(column).execute()
}
