import { sql } from 'kysely'
import type { DbHandle } from '../../src/db/connection.js'

// For tests that an event is written in the transaction of the change it reports: refuse the event (a
// trigger on event_log) and check the change did not commit without it.

/** Makes every insert of a `type` event whose JSON contains `like` fail (SQL LIKE pattern). */
export async function refuse (handle: DbHandle, type: string, like: string): Promise<void> {
  if (handle.dialect === 'sqlite') {
    handle.sqlite.prepare(`create trigger refuse_event before insert on event_log when new.type = '${type}' and new.data like '${like}' begin select raise(abort, 'event log refused'); end`).run()
    return
  }
  await sql.raw("create function refuse_event() returns trigger language plpgsql as $$ begin raise exception 'event log refused'; end $$").execute(handle.db)
  await sql.raw(`create trigger refuse_event before insert on event_log for each row when (new.type = '${type}' and new.data like '${like}') execute function refuse_event()`).execute(handle.db)
}

export async function logged (handle: DbHandle, type: string): Promise<Array<Record<string, unknown>>> {
  const rows = await handle.db.selectFrom('event_log').select('data').where('type', '=', type).orderBy('id').execute()
  return rows.map((r) => JSON.parse(r.data) as Record<string, unknown>)
}
