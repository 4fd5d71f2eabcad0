import { sql, type Kysely } from 'kysely'
import type { Database } from '../database.js'
import { asBuffer, type StatusProgress } from '../stores/statuses.js'
import { appendEvents } from './events.js'

type Db = Kysely<Database>

/** PostgreSQL: the same writes through Kysely, each list one statement (unnest), each step one transaction. */
export function statusProgress (db: Db): StatusProgress {
  return {
    async savePayload (id, bytes) {
      const result = await db.updateTable('statuses').set({ message_payload: asBuffer(bytes) }).where('id', '=', id).where('state', '=', 'sending').executeTakeFirst()
      return result.numUpdatedRows > 0n
    },
    // the log's lock last: held only for the append and the commit
    commitChunk: async (id, jids, sentCount, events = []) => await db.transaction().execute(async (trx) => {
      const updated = await trx.updateTable('statuses').set({ sent_count: sentCount }).where('id', '=', id).executeTakeFirst()
      if (updated.numUpdatedRows === 0n) return false
      await sql`insert into status_recipients (status_id, jid, confirmed) select ${id}, j, 1 from unnest(${[...new Set(jids)]}::text[]) as j
        on conflict (status_id, jid) do update set confirmed = 1`.execute(trx)
      await appendEvents(trx, events)
      return true
    }),
    unconfirmed: async (id, jids) => await db.transaction().execute(async (trx) => {
      if (await trx.selectFrom('statuses').select('id').where('id', '=', id).executeTakeFirst() === undefined) return false
      await sql`insert into status_recipients (status_id, jid, confirmed) select ${id}, j, 0 from unnest(${jids}::text[]) as j on conflict do nothing`.execute(trx)
      return true
    }),
    async notSent (id, jids) {
      await sql`delete from status_recipients where status_id = ${id} and jid = any(${jids}::text[]) and confirmed = 0`.execute(db)
    }
  }
}
