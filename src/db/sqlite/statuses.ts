import type SQLite from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database } from '../database.js'
import type { NewEvent } from '../stores/events.js'
import { asBuffer, type SentStatus, type StatusProgress, type StatusStore } from '../stores/statuses.js'
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

/**
 * SQLite's list: one prepared statement whose rows come as arrays, made into objects here. better-sqlite3 builds
 * a row object property by property, which for 500 statuses cost more than the query (issue 41: listSent
 * 2.5 → 1.2 ms CPU for 500 statuses; bench/NOTES.md). The kept-statements speed trick (src/speed-tricks.ts): off, the list
 * is the shared Kysely query (src/db/stores/statuses.ts).
 */
export function listSent (db: Db, sqlite: SQLite.Database): StatusStore['listSent'] {
  // the columns in the order `row` reads them (a field the record gains and `row` lacks fails the typecheck);
  // prepared on first use (a store made over an older schema, as a migration test does, does not fail)
  let select: SQLite.Statement<[string, number], unknown[]> | undefined
  const prepare = (): SQLite.Statement<[string, number], unknown[]> => sqlite.prepare<[string, number], unknown[]>(`select id, session_id, type, content, caption, message_id, state, created_at,
    contact_count, target_numbers, sent_count, media_file, background_color, font, error, unreachable, audience, mentions,
    viewer_count, reaction_count, reply_count
    from statuses where session_id = ? and created_at >= ? order by created_at desc, id desc`).raw()
  // the row made the record in one step (the record's fields, src/db/stores/statuses.ts: no second mapping pass)
  const row = (r: unknown[]): SentStatus => {
    const v = r as any[] // eslint-disable-line @typescript-eslint/no-explicit-any -- the select's columns, in its order
    return {
      id: v[0], sessionId: v[1], type: v[2], content: v[3], caption: v[4], messageId: v[5], state: v[6], createdAt: v[7],
      contactCount: v[8], targetNumbers: v[9], sentCount: v[10], mediaFile: v[11], backgroundColor: v[12], font: v[13],
      error: v[14], unreachable: v[15], audience: v[16], mentions: v[17], viewerCount: v[18], reactionCount: v[19], replyCount: v[20]
    }
  }
  return async (sessionId, since) => await onSqliteConnection(db, sqlite, () => (select ??= prepare()).all(sessionId, since).map(row))
}
