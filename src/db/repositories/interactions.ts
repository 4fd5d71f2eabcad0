import type SQLite from 'better-sqlite3'
import type pg from 'pg'
import type { Kysely } from 'kysely'
import type { DbHandle } from '../connection.js'
import type { Database, StatusReactionRow, StatusReplyRow } from '../database.js'
import { pnJid } from '../../platform/jid.js'
import { inTransaction } from './pg-tx.js'

// Reactions and replies to statuses (tables status_reactions, status_replies; migration 005).

type Db = Kysely<Database>

interface From {
  /** digits; null while the contact is a LID without a known number */
  number: string | null
  /** `<number>@s.whatsapp.net`, or the LID */
  jid: string
}

async function statusIdOf (db: Db, sessionId: string, messageId: string): Promise<number | undefined> {
  const row = await db.selectFrom('statuses').select('id').where('session_id', '=', sessionId).where('message_id', '=', messageId).executeTakeFirst()
  return row?.id
}

/**
 * Records a reaction: the contact's row takes it when it is newer than the one stored (by its own time; an
 * empty emoji stays as the taken-back state). Returns the row when something changed, undefined for an
 * unknown status, an older reaction or the same message again (a redelivery).
 */
export async function recordReaction (
  db: Db, sessionId: string, r: From & { statusMessageId: string, messageId: string, emoji: string, at: number }
): Promise<StatusReactionRow | undefined> {
  const statusId = await statusIdOf(db, sessionId, r.statusMessageId)
  if (statusId === undefined) return undefined
  return await db.insertInto('status_reactions')
    .values({ status_id: statusId, reactor: r.number ?? r.jid, number: r.number, jid: r.jid, emoji: r.emoji, reacted_at: r.at, message_id: r.messageId })
    .onConflict((oc) => oc.columns(['status_id', 'reactor'])
      .doUpdateSet((eb) => ({
        number: eb.ref('excluded.number'),
        jid: eb.ref('excluded.jid'),
        emoji: eb.ref('excluded.emoji'),
        reacted_at: eb.ref('excluded.reacted_at'),
        message_id: eb.ref('excluded.message_id')
      }))
      .where((eb) => eb.and([
        eb('status_reactions.message_id', '<>', eb.ref('excluded.message_id')),
        eb('status_reactions.reacted_at', '<=', eb.ref('excluded.reacted_at'))
      ])))
    .returningAll()
    .executeTakeFirst()
}

/** Records a reply; undefined for an unknown status or a message already recorded (a redelivery). */
export async function recordReply (
  db: Db, sessionId: string, r: From & { statusMessageId: string, messageId: string, text: string, at: number }
): Promise<StatusReplyRow | undefined> {
  const statusId = await statusIdOf(db, sessionId, r.statusMessageId)
  if (statusId === undefined) return undefined
  return await db.insertInto('status_replies')
    .values({
      status_id: statusId, message_id: r.messageId, replier: r.number ?? r.jid, number: r.number, jid: r.jid, text: r.text, replied_at: r.at,
      received_at: Date.now()
    })
    .onConflict((oc) => oc.columns(['status_id', 'message_id']).doNothing())
    .returningAll()
    .executeTakeFirst()
}

/** Current reactions of a status (taken-back ones left out), first first. */
export async function listReactions (db: Db, statusId: number): Promise<StatusReactionRow[]> {
  return await db.selectFrom('status_reactions').selectAll()
    .where('status_id', '=', statusId).where('emoji', '<>', '')
    .orderBy('reacted_at').orderBy('reactor')
    .execute()
}

/** Replies to a status, oldest first. */
export async function listReplies (db: Db, statusId: number): Promise<StatusReplyRow[]> {
  return await db.selectFrom('status_replies').selectAll()
    .where('status_id', '=', statusId)
    .orderBy('replied_at').orderBy('received_at').orderBy('message_id')
    .execute()
}

/** Reactions (current) and replies to statuses created at or after `since`, over every session. */
/** `sessionIds`: only those sessions' statuses (a scoped key's view); absent: every session. */
export async function interactionTotals (db: Db, since = 0, sessionIds?: readonly string[]): Promise<{ reactions: number, replies: number }> {
  if (sessionIds?.length === 0) return { reactions: 0, replies: 0 }
  let reacted = db.selectFrom('status_reactions as r').innerJoin('statuses as s', 's.id', 'r.status_id')
    .select((eb) => eb.fn.countAll<number>().as('n')).where('r.emoji', '<>', '').where('s.created_at', '>=', since)
  if (sessionIds !== undefined) reacted = reacted.where('s.session_id', 'in', sessionIds)
  let replied = db.selectFrom('status_replies as r').innerJoin('statuses as s', 's.id', 'r.status_id')
    .select((eb) => eb.fn.countAll<number>().as('n')).where('s.created_at', '>=', since)
  if (sessionIds !== undefined) replied = replied.where('s.session_id', 'in', sessionIds)
  const reactions = await reacted.executeTakeFirstOrThrow()
  const replies = await replied.executeTakeFirstOrThrow()
  return { reactions: Number(reactions.n), replies: Number(replies.n) }
}

/**
 * The LID side, synchronous like the viewers' (the platform's LID look-up calls it while it runs):
 * reactions and replies stored under a LID get its number.
 */
export function interactionLidWriter (sqlite: SQLite.Database) {
  const unmapped = sqlite.prepare<[string, string, number], string>(
    'select r.reactor from status_reactions r join statuses s on s.id = r.status_id where r.number is null and s.session_id = ? ' +
    'union select p.replier from status_replies p join statuses s on s.id = p.status_id where p.number is null and s.session_id = ? limit ?'
  ).pluck()
  const lidReactions = sqlite.prepare<[string, string], StatusReactionRow>(
    'select r.* from status_reactions r join statuses s on s.id = r.status_id where r.reactor = ? and r.number is null and s.session_id = ?')
  const removeReaction = sqlite.prepare<[number, string]>('delete from status_reactions where status_id = ? and reactor = ?')
  // the number may have reacted under its number too: the later reaction stays
  const upsertReaction = sqlite.prepare<[number, string, string, string, string, number, string]>(
    'insert into status_reactions (status_id, reactor, number, jid, emoji, reacted_at, message_id) values (?, ?, ?, ?, ?, ?, ?) ' +
    'on conflict (status_id, reactor) do update set emoji = excluded.emoji, reacted_at = excluded.reacted_at, message_id = excluded.message_id ' +
    'where excluded.reacted_at > status_reactions.reacted_at')
  const mapReplies = sqlite.prepare<[string, string, string, string, string]>(
    'update status_replies set replier = ?, number = ?, jid = ? where replier = ? and number is null ' +
    'and status_id in (select id from statuses where session_id = ?) returning status_id')

  const mapLids = sqlite.transaction((sessionId: string, mappings: Array<{ lid: string, number: string }>): Set<number> => {
    const changed = new Set<number>()
    for (const { lid, number } of mappings) {
      const jid = pnJid(number)
      for (const row of lidReactions.all(lid, sessionId)) {
        removeReaction.run(row.status_id, lid)
        upsertReaction.run(row.status_id, number, number, jid, row.emoji, row.reacted_at, row.message_id)
        changed.add(row.status_id)
      }
      for (const row of mapReplies.all(number, number, jid, lid, sessionId) as Array<{ status_id: number }>) changed.add(row.status_id)
    }
    return changed
  })

  return {
    /** LIDs of the session's reactions and replies without a number */
    unmappedLids: (sessionId: string, limit: number): string[] => unmapped.all(sessionId, sessionId, limit),
    /** returns the statuses whose reactions or replies changed */
    mapLids: (sessionId: string, mappings: Array<{ lid: string, number: string }>): Set<number> => mapLids(sessionId, mappings)
  }
}

/** interactionLidWriter's PostgreSQL twin: the same statements in one transaction, asynchronous. */
export function pgInteractionLidWriter (pool: pg.Pool) {
  return {
    unmappedLids: async (sessionId: string, limit: number): Promise<string[]> => (await pool.query<{ lid: string }>(
      'select r.reactor as lid from status_reactions r join statuses s on s.id = r.status_id where r.number is null and s.session_id = $1 ' +
      'union select p.replier from status_replies p join statuses s on s.id = p.status_id where p.number is null and s.session_id = $1 limit $2',
      [sessionId, limit])).rows.map((r) => r.lid),
    mapLids: async (sessionId: string, mappings: Array<{ lid: string, number: string }>): Promise<Set<number>> => await inTransaction(pool, async (client) => {
      const changed = new Set<number>()
      for (const { lid, number } of mappings) {
        const jid = pnJid(number)
        const moved = await client.query<StatusReactionRow>(
          `delete from status_reactions r using statuses s where s.id = r.status_id and r.reactor = $1 and r.number is null and s.session_id = $2
           returning r.*`, [lid, sessionId])
        for (const row of moved.rows) {
          await client.query(
            `insert into status_reactions (status_id, reactor, number, jid, emoji, reacted_at, message_id) values ($1, $2, $2, $3, $4, $5, $6)
             on conflict (status_id, reactor) do update set emoji = excluded.emoji, reacted_at = excluded.reacted_at, message_id = excluded.message_id
             where excluded.reacted_at > status_reactions.reacted_at`, [row.status_id, number, jid, row.emoji, row.reacted_at, row.message_id])
          changed.add(row.status_id)
        }
        const replies = await client.query<{ status_id: number }>(
          `update status_replies set replier = $1, number = $1, jid = $2 where replier = $3 and number is null
           and status_id in (select id from statuses where session_id = $4) returning status_id`, [number, jid, lid, sessionId])
        for (const row of replies.rows) changed.add(row.status_id)
      }
      return changed
    })
  }
}

/** The dialect's LID writer for reactions and replies. */
export function interactionLidWriterFor (handle: DbHandle): ReturnType<typeof interactionLidWriter> | ReturnType<typeof pgInteractionLidWriter> {
  return handle.dialect === 'sqlite' ? interactionLidWriter(handle.sqlite) : pgInteractionLidWriter(handle.pool)
}
