import type SQLite from 'better-sqlite3'
import { sql, type Kysely } from 'kysely'
import type { DbHandle } from '../connection.js'
import type { Database, NewStatusRow, StatusRow } from '../database.js'
import { appendEvents, sqliteEventLog, type NewEvent } from './events.js'
import { onSqliteConnection } from './sqlite-gate.js'

type Db = Kysely<Database>

/**
 * A transaction a change runs in (the domain events' `within` hands it out): a store method given one
 * joins it, so the change and its events commit together.
 */
export type StoreTx = Kysely<Database>

/** The counts the statuses row keeps (migration 019's triggers): real viewers, standing reactions, replies. */
type KeptCounts = 'viewer_count' | 'reaction_count' | 'reply_count'

/** A status row without its stored message (which only a resumed send reads) and its kept counts. */
export type StatusInfo = Omit<StatusRow, 'message_payload' | KeptCounts>

export type SentStatusRow = StatusInfo & Pick<StatusRow, KeptCounts>

export interface ExpiredStatus {
  id: number
  session_id: string
  media_file: string | null
}

export interface DeliveryRow { recipient: string, number: string | null, jid: string, delivered_at: number }

/** Statuses, a send's progress (its recipients chunk by chunk), their delivery receipts and the posts pacing counts. */
export interface StatusStore {
  insert: (row: NewStatusRow) => Promise<number>
  find: (sessionId: string, id: number, tx?: StoreTx) => Promise<StatusInfo | undefined>
  /** Statuses (sending, sent or partial) created at or after `since`, newest first, with their counts of real viewers, reactions and replies. */
  listSent: (sessionId: string, since: number) => Promise<SentStatusRow[]>
  /**
   * The JIDs that have the status (committed chunk by chunk), own number included: `confirmed` only those
   * the platform acknowledged, `all` also those whose chunk went out unacknowledged (what a revoke reaches).
   */
  recipients: (id: number, which?: 'all' | 'confirmed') => Promise<string[]>
  /** Rows a crash left `sending`, oldest first, with their stored message. */
  interrupted: () => Promise<StatusRow[]>
  /** Records the recipients a send could not reach (no LID known for them); false when the row is gone. */
  setUnreachable: (id: number, numbers: string[], tx?: StoreTx) => Promise<boolean>
  /** Ends a send: `sent`, or `partial` with why it stopped; false when the row is gone. */
  finish: (id: number, outcome: { state: 'sent' | 'partial', sentCount: number, error?: string }, tx?: StoreTx) => Promise<boolean>
  remove: (id: number, tx?: StoreTx) => Promise<boolean>
  /** Sets the platform's late rejection on the status sent under `messageId`; its id, or undefined when unknown. */
  setError: (sessionId: string, messageId: string, error: string, tx?: StoreTx) => Promise<number | undefined>
  /** The message of the status sent under `messageId` as it went out (its stored payload); null when there is none. */
  sentMessagePayload: (sessionId: string, messageId: string) => Promise<Uint8Array | null>
  /** Whether any status (of any session) or any schedule still refers to the media file. */
  mediaInUse: (filename: string) => Promise<boolean>
  /** Deletes every status created before `before` (viewers go with them by cascade); what was deleted. */
  deleteBefore: (before: number, tx?: StoreTx) => Promise<ExpiredStatus[]>
  /** A status's delivery receipts, first delivery per recipient (the viewer store writes them with the receipts). */
  deliveries: (statusId: number) => Promise<DeliveryRow[]>
  /** A session's posts since `since` (ms), oldest first: when each was made and how many recipients it had (pacing). */
  postsSince: (sessionId: string, since: number) => Promise<Array<{ created_at: number, contact_count: number }>>

  // A send's progress, written between two chunks: each resolves once committed, and answers false when
  // the status row is gone (deleted with its session meanwhile); nothing is written then.
  /** the built message, before the first chunk */
  savePayload: (id: number, bytes: Uint8Array) => Promise<boolean>
  /** a chunk the platform acknowledged, with the new sent_count and the events reporting it, in one transaction */
  commitChunk: (id: number, jids: string[], sentCount: number, events?: NewEvent[]) => Promise<boolean>
  /** a chunk about to go out, or written but not acknowledged before the link closed: they may have it */
  unconfirmed: (id: number, jids: string[]) => Promise<boolean>
  /** unconfirmed JIDs known not to have gone out after all (their chunk failed before it was written) */
  notSent: (id: number, jids: string[]) => Promise<void>
}

const INFO_COLUMNS = [
  'id', 'session_id', 'type', 'content', 'caption', 'message_id', 'state', 'created_at', 'contact_count', 'target_numbers',
  'sent_count', 'media_file', 'background_color', 'font', 'error', 'unreachable', 'audience', 'mentions'
] as const satisfies ReadonlyArray<keyof StatusInfo>

const LIST_COLUMNS = [...INFO_COLUMNS, 'viewer_count', 'reaction_count', 'reply_count'] as const satisfies ReadonlyArray<keyof SentStatusRow>

const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)

type Progress = Pick<StatusStore, 'savePayload' | 'commitChunk' | 'unconfirmed' | 'notSent'>

export function createStatusStore (handle: DbHandle): StatusStore {
  if (handle.dialect === 'postgres') return { ...kyselyStatuses(handle.db), ...postgresProgress(handle.db) }
  const plain = { ...kyselyStatuses(handle.db), ...sqliteProgress(handle.db, handle.sqlite) }
  return handle.plainStatements === true ? plain : { ...plain, listSent: sqliteListSent(handle.db, handle.sqlite) }
}

/** The queries both dialects run the same. */
function kyselyStatuses (db: Db): Omit<StatusStore, keyof Progress> {
  return {
    async insert (row) {
      const { id } = await db.insertInto('statuses').values(row).returning('id').executeTakeFirstOrThrow()
      return id
    },
    async find (sessionId, id, tx = db) {
      return await tx.selectFrom('statuses').select(INFO_COLUMNS).where('id', '=', id).where('session_id', '=', sessionId).executeTakeFirst()
    },
    async listSent (sessionId, since) {
      // the counts are columns kept where the rows are written (migration 019): the list's cost does not grow with reach
      return await db.selectFrom('statuses')
        .select(LIST_COLUMNS)
        .where('session_id', '=', sessionId)
        .where('created_at', '>=', since)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute()
    },
    async recipients (id, which = 'all') {
      let query = db.selectFrom('status_recipients').select('jid').where('status_id', '=', id)
      if (which === 'confirmed') query = query.where('confirmed', '=', 1)
      return (await query.execute()).map((r) => r.jid)
    },
    async interrupted () {
      return await db.selectFrom('statuses').selectAll().where('state', '=', 'sending').orderBy('id').execute()
    },
    async setUnreachable (id, numbers, tx = db) {
      const result = await tx.updateTable('statuses').set({ unreachable: numbers.join(',') }).where('id', '=', id).executeTakeFirst()
      return result.numUpdatedRows > 0n
    },
    async finish (id, outcome, tx = db) {
      const result = await tx.updateTable('statuses')
        .set({ state: outcome.state, sent_count: outcome.sentCount, ...(outcome.error !== undefined ? { error: outcome.error } : {}) })
        .where('id', '=', id)
        .executeTakeFirst()
      return result.numUpdatedRows > 0n
    },
    async remove (id, tx = db) {
      const result = await tx.deleteFrom('statuses').where('id', '=', id).executeTakeFirst()
      return result.numDeletedRows > 0n
    },
    async setError (sessionId, messageId, error, tx = db) {
      const row = await tx.updateTable('statuses').set({ error })
        .where('session_id', '=', sessionId).where('message_id', '=', messageId)
        .returning('id').executeTakeFirst()
      return row?.id
    },
    async sentMessagePayload (sessionId, messageId) {
      const row = await db.selectFrom('statuses').select('message_payload').where('session_id', '=', sessionId).where('message_id', '=', messageId).executeTakeFirst()
      return row?.message_payload ?? null
    },
    async mediaInUse (filename) {
      const row = await db.selectFrom('statuses').select('id').where('media_file', '=', filename).limit(1).executeTakeFirst()
      if (row !== undefined) return true
      // a scheduled status names it: kept while the schedule exists (issue 24)
      const scheduled = await db.selectFrom('schedules').select('id').where('media_file', '=', filename).limit(1).executeTakeFirst()
      return scheduled !== undefined
    },
    async deleteBefore (before, tx = db) {
      return await tx.deleteFrom('statuses').where('created_at', '<', before).returning(['id', 'session_id', 'media_file']).execute()
    },
    async deliveries (statusId) {
      return await db.selectFrom('status_deliveries').select(['recipient', 'number', 'jid', 'delivered_at']).where('status_id', '=', statusId).orderBy('delivered_at').execute()
    },
    async postsSince (sessionId, since) {
      return await db.selectFrom('statuses').select(['created_at', 'contact_count'])
        .where('session_id', '=', sessionId).where('created_at', '>', since).orderBy('created_at').execute()
    }
  }
}

/**
 * SQLite's list: one prepared statement whose rows come as arrays, made into objects here. better-sqlite3 builds
 * a row object property by property, which for 500 statuses cost more than the query (issue 41: listSent
 * 2.5 → 1.2 ms CPU for 500 statuses; bench/NOTES.md). The kept-statements speed trick (src/speed-tricks.ts): off, the list
 * is the Kysely query above.
 */
function sqliteListSent (db: Db, sqlite: SQLite.Database): StatusStore['listSent'] {
  // the columns in the order `row` reads them (a column the row type gains and `row` lacks fails the typecheck);
  // prepared on first use (a store made over an older schema, as a migration test does, does not fail)
  let select: SQLite.Statement<[string, number], unknown[]> | undefined
  const prepare = (): SQLite.Statement<[string, number], unknown[]> => sqlite.prepare<[string, number], unknown[]>(`select id, session_id, type, content, caption, message_id, state, created_at,
    contact_count, target_numbers, sent_count, media_file, background_color, font, error, unreachable, audience, mentions,
    viewer_count, reaction_count, reply_count
    from statuses where session_id = ? and created_at >= ? order by created_at desc, id desc`).raw()
  const row = (r: unknown[]): SentStatusRow => {
    const v = r as any[] // eslint-disable-line @typescript-eslint/no-explicit-any -- the select's columns, in its order
    return {
      id: v[0], session_id: v[1], type: v[2], content: v[3], caption: v[4], message_id: v[5], state: v[6], created_at: v[7],
      contact_count: v[8], target_numbers: v[9], sent_count: v[10], media_file: v[11], background_color: v[12], font: v[13],
      error: v[14], unreachable: v[15], audience: v[16], mentions: v[17], viewer_count: v[18], reaction_count: v[19], reply_count: v[20]
    }
  }
  return async (sessionId, since) => await onSqliteConnection(db, sqlite, () => (select ??= prepare()).all(sessionId, since).map(row))
}

/**
 * SQLite: prepared statements in synchronous better-sqlite3 transactions, run through onSqliteConnection
 * (so never inside another caller's open transaction). A big send commits a chunk per few hundred
 * recipients between two chunks: the bench figure "first post to 1,000 new contacts ÷ stock Baileys"
 * (bench/NOTES.md) is what they keep low.
 */
function sqliteProgress (db: Db, sqlite: SQLite.Database): Progress {
  const log = sqliteEventLog(sqlite)
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

/** PostgreSQL: the same writes through Kysely, each list one statement (unnest), each step one transaction. */
function postgresProgress (db: Db): Progress {
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
      await appendEvents(trx, 'postgres', events)
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
