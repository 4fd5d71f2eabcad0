import type SQLite from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database } from '../database.js'
import type { NewEvent } from '../stores/events.js'
import { asBuffer, type StatusProgress } from '../stores/statuses.js'
import { eventLog } from './events.js'
import { onSqliteConnection } from './gate.js'

type Db = Kysely<Database>

/**
 * SQLite: prepared statements in synchronous better-sqlite3 transactions, run through onSqliteConnection
 * (so never inside another caller's open transaction). A big send commits a chunk per few hundred
 * recipients between two chunks: the bench figure "first post to 1,000 new contacts ÷ stock Baileys"
 * (bench/NOTES.md) is what they keep low.
 */
export function statusProgress (db: Db, sqlite: SQLite.Database): StatusProgress {
  const log = eventLog(sqlite)
  const payload = sqlite.prepare<[Buffer, number]>("update statuses set message_payload = ? where id = ? and state = 'sending'")
  const confirm = sqlite.prepare<[number, string]>(
    'insert into status_recipients (status_id, jid, confirmed) values (?, ?, 1) on conflict (status_id, jid) do update set confirmed = 1')
  const maybe = sqlite.prepare<[number, string]>('insert or ignore into status_recipients (status_id, jid, confirmed) values (?, ?, 0)')
  const count = sqlite.prepare<[number, number]>('update statuses set sent_count = ? where id = ?')
  const exists = sqlite.prepare<[number]>('select 1 from statuses where id = ?').pluck()
  const forget = sqlite.prepare<[number, string]>('delete from status_recipients where status_id = ? and jid = ? and confirmed = 0')
  const commit = sqlite.transaction((id: number, jids: string[], sentCount: number, events: NewEvent[]): boolean => {
    if (count.run(sentCount, id).changes === 0) return false
    for (const jid of jids) confirm.run(id, jid)
    log.append(events)
    return true
  })
  const unconfirmed = sqlite.transaction((id: number, jids: string[]): boolean => {
    if (exists.get(id) === undefined) return false
    for (const jid of jids) maybe.run(id, jid)
    return true
  })
  const notSent = sqlite.transaction((id: number, jids: string[]): void => { for (const jid of jids) forget.run(id, jid) })
  const run = async <T>(work: () => T): Promise<T> => await onSqliteConnection(db, sqlite, work)
  return {
    savePayload: async (id, bytes) => await run(() => payload.run(asBuffer(bytes), id).changes > 0),
    commitChunk: async (id, jids, sentCount, events = []) => await run(() => commit(id, jids, sentCount, events)),
    unconfirmed: async (id, jids) => await run(() => unconfirmed(id, jids)),
    notSent: async (id, jids) => { await run(() => { notSent(id, jids) }) }
  }
}
