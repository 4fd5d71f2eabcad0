import type { Kysely } from 'kysely'
import type { Database } from '../database.js'
import { REACTION_FIELDS, REPLY_FIELDS, type ReceiptPart, type ViewerStore } from './viewers.js'
import { pnJid } from '../../jid.js'

type Db = Kysely<Database>

// The viewer store's reactions and replies (tables status_reactions, status_replies; migration 005).

/** The viewer store: the backend's receipt path (src/db/sqlite/viewers.ts, src/db/postgres/viewers.ts) and the reactions and replies. */
export function viewerStore (db: Db, receipts: ReceiptPart): ViewerStore {
  return { ...receipts, ...interactions(db) }
}

/** Reactions and replies: the same Kysely queries on both backends (not on a bench figure's path). */
export function interactions (db: Db): Omit<ViewerStore, keyof ReceiptPart> {
  async function statusIdOf (sessionId: string, messageId: string): Promise<number | undefined> {
    const row = await db.selectFrom('statuses').select('id').where('session_id', '=', sessionId).where('message_id', '=', messageId).executeTakeFirst()
    return row?.id
  }
  return {
    async recordReaction (sessionId, r) {
      const statusId = await statusIdOf(sessionId, r.statusMessageId)
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
        .returning(REACTION_FIELDS)
        .executeTakeFirst()
    },
    async recordReply (sessionId, r) {
      const statusId = await statusIdOf(sessionId, r.statusMessageId)
      if (statusId === undefined) return undefined
      return await db.insertInto('status_replies')
        .values({
          status_id: statusId, message_id: r.messageId, replier: r.number ?? r.jid, number: r.number, jid: r.jid, text: r.text,
          replied_at: r.at, received_at: Date.now()
        })
        .onConflict((oc) => oc.columns(['status_id', 'message_id']).doNothing())
        .returning(REPLY_FIELDS)
        .executeTakeFirst()
    },
    async reactions (statusId) {
      return await db.selectFrom('status_reactions').select(REACTION_FIELDS)
        .where('status_id', '=', statusId).where('emoji', '<>', '')
        .orderBy('reacted_at').orderBy('reactor')
        .execute()
    },
    async replies (statusId) {
      return await db.selectFrom('status_replies').select(REPLY_FIELDS)
        .where('status_id', '=', statusId)
        .orderBy('replied_at').orderBy('received_at').orderBy('message_id')
        .execute()
    },
    async unmappedInteractionLids (sessionId, limit) {
      const reactors = db.selectFrom('status_reactions as r').innerJoin('statuses as s', 's.id', 'r.status_id')
        .select('r.reactor as lid').where('r.number', 'is', null).where('s.session_id', '=', sessionId)
      const repliers = db.selectFrom('status_replies as p').innerJoin('statuses as s', 's.id', 'p.status_id')
        .select('p.replier as lid').where('p.number', 'is', null).where('s.session_id', '=', sessionId)
      return (await reactors.union(repliers).limit(limit).execute()).map((r) => r.lid)
    },
    mapInteractionLids: async (sessionId, mappings) => await db.transaction().execute(async (trx) => {
      const changed = new Set<number>()
      const ofSession = trx.selectFrom('statuses').select('id').where('session_id', '=', sessionId)
      for (const { lid, number } of mappings) {
        const jid = pnJid(number)
        const rows = await trx.selectFrom('status_reactions').selectAll().where('reactor', '=', lid).where('number', 'is', null).where('status_id', 'in', ofSession).execute()
        for (const row of rows) {
          await trx.deleteFrom('status_reactions').where('status_id', '=', row.status_id).where('reactor', '=', lid).execute()
          // the number may have reacted under its number too: the later reaction stays
          await trx.insertInto('status_reactions')
            .values({ status_id: row.status_id, reactor: number, number, jid, emoji: row.emoji, reacted_at: row.reacted_at, message_id: row.message_id })
            .onConflict((oc) => oc.columns(['status_id', 'reactor'])
              .doUpdateSet((eb) => ({ emoji: eb.ref('excluded.emoji'), reacted_at: eb.ref('excluded.reacted_at'), message_id: eb.ref('excluded.message_id') }))
              .where((eb) => eb('excluded.reacted_at', '>', eb.ref('status_reactions.reacted_at'))))
            .execute()
          changed.add(row.status_id)
        }
        const replies = await trx.updateTable('status_replies').set({ replier: number, number, jid })
          .where('replier', '=', lid).where('number', 'is', null).where('status_id', 'in', ofSession)
          .returning('status_id').execute()
        for (const row of replies) changed.add(row.status_id)
      }
      return changed
    })
  }
}
