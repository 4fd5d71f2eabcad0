import { sql, type Kysely } from 'kysely'
import type { Database } from '../database.js'

// What the linked phone shares with a session (issue 24, `phone_contacts` and `phone_status_privacy`), kept
// current from the platform. The same queries on SQLite and PostgreSQL; a change of the contact list commits
// whole (its removals and saves in one transaction).

type Db = Kysely<Database>

/** One saved contact as the phone gave it. */
export interface ContactRecord {
  /** `<number>@s.whatsapp.net` or `<lid>@lid` */
  jid: string
  number: string | null
  lid: string | null
  name: string | null
}

/** A saved contact as stored: its id is the order the phone's sync delivered it in (the page's cursor). */
export interface Contact extends ContactRecord { id: number }
/** Who sees the account's statuses: its contacts, only a list of them, or all of them but a list. */
export type StatusPrivacyMode = 'contacts' | 'allowlist' | 'denylist'
export interface StoredStatusPrivacy { mode: StatusPrivacyMode, numbers: string[], updatedAt: number }

export interface ContactStore {
  /** saves (inserts or updates by jid) and removes contacts, together */
  change: (sessionId: string, change: { saved: readonly ContactRecord[], removed: readonly string[] }, now: number) => Promise<void>
  /** makes `contacts` the session's whole list, the others going, together; the jids removed */
  replace: (sessionId: string, contacts: readonly ContactRecord[], now: number) => Promise<string[]>
  /**
   * One page in id order (the order the phone's sync delivered them): those after `after`, at most `limit`;
   * `search` matches the name (any case) or the number, as a substring.
   */
  page: (sessionId: string, q: { limit: number, after?: number, search?: string }) => Promise<Contact[]>
  /** every saved contact of the session, in id order */
  all: (sessionId: string) => Promise<Contact[]>
  saveStatusPrivacy: (sessionId: string, mode: StatusPrivacyMode, numbers: readonly string[], now: number) => Promise<void>
  statusPrivacy: (sessionId: string) => Promise<StoredStatusPrivacy | undefined>
  /** forgets what the phone shared (its contacts and status privacy): the account was logged out */
  forget: (sessionId: string) => Promise<void>
}

/** rows per INSERT: 6 values each, well under SQLite's and PostgreSQL's parameter limits */
const CHUNK = 500

function chunks<T> (items: readonly T[]): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK))
  return out
}

async function save (db: Db, sessionId: string, contacts: readonly ContactRecord[], now: number): Promise<void> {
  for (const part of chunks(contacts)) {
    await db.insertInto('phone_contacts')
      .values(part.map((c) => ({ session_id: sessionId, jid: c.jid, number: c.number, lid: c.lid, name: c.name, updated_at: now })))
      .onConflict((oc) => oc.columns(['session_id', 'jid']).doUpdateSet((eb) => ({
        number: eb.ref('excluded.number'),
        lid: eb.ref('excluded.lid'),
        name: eb.ref('excluded.name'),
        updated_at: eb.ref('excluded.updated_at')
      })))
      .execute()
  }
}

async function remove (db: Db, sessionId: string, jids: readonly string[]): Promise<void> {
  for (const part of chunks(jids)) {
    await db.deleteFrom('phone_contacts').where('session_id', '=', sessionId).where('jid', 'in', part).execute()
  }
}

/** `term` for LIKE: lower case, its wildcards taken literally (escape character `\`). */
function likePattern (term: string): string {
  return `%${term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

const COLUMNS = ['id', 'jid', 'number', 'lid', 'name'] as const

export function contactStore (db: Db): ContactStore {
  return {
    async change (sessionId, change, now) {
      await db.transaction().execute(async (trx) => {
        if (change.removed.length > 0) await remove(trx, sessionId, change.removed)
        if (change.saved.length > 0) await save(trx, sessionId, change.saved, now)
      })
    },

    async replace (sessionId, contacts, now) {
      return await db.transaction().execute(async (trx) => {
        const keep = new Set(contacts.map((c) => c.jid))
        const stored = await trx.selectFrom('phone_contacts').select('jid').where('session_id', '=', sessionId).execute()
        const gone = stored.map((r) => r.jid).filter((jid) => !keep.has(jid))
        await remove(trx, sessionId, gone)
        await save(trx, sessionId, contacts, now)
        return gone
      })
    },

    async page (sessionId, q) {
      let query = db.selectFrom('phone_contacts').select(COLUMNS).where('session_id', '=', sessionId)
      if (q.after !== undefined) query = query.where('id', '>', q.after)
      const term = q.search?.trim() ?? ''
      if (term !== '') {
        const pattern = likePattern(term)
        query = query.where((eb) => eb.or([
          eb(sql`lower(${sql.ref('name')})`, 'like', sql<string>`${pattern} escape '\\'`),
          eb(sql`${sql.ref('number')}`, 'like', sql<string>`${pattern} escape '\\'`)
        ]))
      }
      return await query.orderBy('id').limit(q.limit).execute()
    },

    async all (sessionId) {
      return await db.selectFrom('phone_contacts').select(COLUMNS).where('session_id', '=', sessionId).orderBy('id').execute()
    },

    async saveStatusPrivacy (sessionId, mode, numbers, now) {
      const row = { session_id: sessionId, mode, numbers: JSON.stringify(numbers), updated_at: now }
      await db.insertInto('phone_status_privacy').values(row)
        .onConflict((oc) => oc.column('session_id').doUpdateSet({ mode: row.mode, numbers: row.numbers, updated_at: row.updated_at }))
        .execute()
    },

    async statusPrivacy (sessionId) {
      const row = await db.selectFrom('phone_status_privacy').selectAll().where('session_id', '=', sessionId).executeTakeFirst()
      return row === undefined ? undefined : { mode: row.mode, numbers: JSON.parse(row.numbers) as string[], updatedAt: row.updated_at }
    },

    async forget (sessionId) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('phone_contacts').where('session_id', '=', sessionId).execute()
        await trx.deleteFrom('phone_status_privacy').where('session_id', '=', sessionId).execute()
      })
    }
  }
}
