import type SQLiteTypes from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database } from '../database.js'
import type { NewEvent } from '../stores/events.js'
import type { Session, SessionStore } from '../stores/sessions.js'
import { writeOrder } from '../write-order.js'
import { eventLog } from './events.js'
import { onSqliteConnection } from './gate.js'

type Db = Kysely<Database>

/**
 * The link writes (the row and the connection-status reporting it, one
 * transaction) as prepared statements. Every stored session writes one as it opens, and on Node 20 each
 * promise costs in proportion to the sessions open (Baileys' AsyncLocalStorage per key store, issue 33): a
 * Kysely transaction is ~80 promises, this ~20. The start with 100 sessions ("spawn → all open", bench
 * startup) went 3.7 → 4.7 s when these writes moved to Kysely (issue 34).
 */
export function preparedLinkWrites (db: Db, sqlite: SQLiteTypes.Database): Pick<SessionStore, 'markLinked' | 'markUnlinked'> {
  const writes = writeOrder()
  const log = eventLog(sqlite)
  const update = sqlite.prepare<[string | null, string | null, number, string]>('UPDATE sessions SET own_number = ?, own_lid = ?, linked = ? WHERE id = ?')
  const linkWrite = sqlite.transaction((sessionId: string, ownNumber: string | null, ownLid: string | null, linked: number, events: NewEvent[]) => {
    update.run(ownNumber, ownLid, linked, sessionId)
    log.append(events)
  })
  const link = async (sessionId: string, ownNumber: string | null, ownLid: string | null, linked: number, events: NewEvent[]): Promise<void> => {
    await writes.run(sessionId, async () => { await onSqliteConnection(db, sqlite, () => { linkWrite(sessionId, ownNumber, ownLid, linked, events) }) })
  }
  return {
    markLinked: async (sessionId, ownNumber, ownLid, events = []) => { await link(sessionId, ownNumber, ownLid, 1, events) },
    markUnlinked: async (sessionId, events = []) => { await link(sessionId, null, null, 0, events) }
  }
}

/**
 * Every session, as one prepared statement read as arrays (the kept-statements speed trick, as the sent-statuses
 * list): GET /api/stats and GET /api/sessions read every row on each request, and better-sqlite3 building each
 * row object through Kysely cost 2.1 ms of CPU for 1,000 sessions (issue 41, bench/NOTES.md "GET /api/stats
 * while 1,000 sessions open"). Prepared on first use, so a store over an older schema does not fail.
 */
export function preparedSessionList (db: Db, sqlite: SQLiteTypes.Database): Pick<SessionStore, 'list'> {
  let select: SQLiteTypes.Statement<[], unknown[]> | undefined
  const prepare = (): SQLiteTypes.Statement<[], unknown[]> => sqlite.prepare<[], unknown[]>(
    'select id, name, auth_method, phone_number, own_number, own_lid, linked, created_at from sessions order by created_at, id').raw()
  // the Session's every field, from the select's columns in its order (a field Session gains and this lacks fails the
  // typecheck); the same values as toSession (src/db/stores/sessions.ts) gives for the row
  const row = (v: any[]): Session => ({ // eslint-disable-line @typescript-eslint/no-explicit-any -- the select's columns, in its order
    id: v[0], name: v[1], authMethod: v[2], phoneNumber: v[3], ownNumber: v[4], ownLid: v[5], linked: v[6] !== 0, createdAt: v[7]
  })
  return { list: async () => await onSqliteConnection(db, sqlite, () => (select ??= prepare()).all().map(row)) }
}
