import { sql, type Kysely } from 'kysely'
import type { Database, PhoneContactTable, PhoneStatusPrivacyTable } from '../database.js'

// Queries on `phone_contacts` and `phone_status_privacy` (issue 24): what the linked phone shares with a
// session, kept current from the platform. The same on SQLite and PostgreSQL; writes take a transaction
// (or the database) so a change and its neighbours commit together.

type Db = Kysely<Database>

/** One saved contact as the phone gave it. */
export interface ContactRecord {
  /** `<number>@s.whatsapp.net` or `<lid>@lid` */
  jid: string
  number: string | null
  lid: string | null
  name: string | null
}

export type ContactRow = Pick<PhoneContactTable, 'jid' | 'number' | 'lid' | 'name'> & { id: number }

/** rows per INSERT: 6 values each, well under SQLite's and PostgreSQL's parameter limits */
const CHUNK = 500

function chunks<T> (items: readonly T[]): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK))
  return out
}

/** Saves (inserts or updates) contacts by their jid. */
export async function saveContacts (db: Db, sessionId: string, contacts: readonly ContactRecord[], now: number): Promise<void> {
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

/** Removes contacts by jid; how many there were. */
export async function removeContacts (db: Db, sessionId: string, jids: readonly string[]): Promise<number> {
  let removed = 0
  for (const part of chunks(jids)) {
    const r = await db.deleteFrom('phone_contacts').where('session_id', '=', sessionId).where('jid', 'in', part).executeTakeFirst()
    removed += Number(r.numDeletedRows)
  }
  return removed
}

/** Makes `contacts` the session's whole list: the others go. Run it in a transaction. Returns the jids removed. */
export async function replaceContacts (db: Db, sessionId: string, contacts: readonly ContactRecord[], now: number): Promise<string[]> {
  const keep = new Set(contacts.map((c) => c.jid))
  const stored = await db.selectFrom('phone_contacts').select('jid').where('session_id', '=', sessionId).execute()
  const gone = stored.map((r) => r.jid).filter((jid) => !keep.has(jid))
  await removeContacts(db, sessionId, gone)
  await saveContacts(db, sessionId, contacts, now)
  return gone
}

/** `term` for LIKE: lower case, its wildcards taken literally (escape character `\`). */
function likePattern (term: string): string {
  return `%${term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

/**
 * One page of the session's contacts in id order (the order the phone's sync delivered them): those after
 * `after`, at most `limit`; `search` matches the name (any case) or the number, as a substring.
 */
export async function contactsPage (db: Db, sessionId: string, q: { limit: number, after?: number, search?: string }): Promise<ContactRow[]> {
  let query = db.selectFrom('phone_contacts').select(['id', 'jid', 'number', 'lid', 'name'])
    .where('session_id', '=', sessionId)
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
}

/** Every saved contact of the session, in id order. */
export async function allContacts (db: Db, sessionId: string): Promise<ContactRow[]> {
  return await db.selectFrom('phone_contacts').select(['id', 'jid', 'number', 'lid', 'name'])
    .where('session_id', '=', sessionId).orderBy('id').execute()
}

export async function saveStatusPrivacy (db: Db, sessionId: string, mode: PhoneStatusPrivacyTable['mode'], numbers: readonly string[], now: number): Promise<void> {
  const row = { session_id: sessionId, mode, numbers: JSON.stringify(numbers), updated_at: now }
  await db.insertInto('phone_status_privacy').values(row)
    .onConflict((oc) => oc.column('session_id').doUpdateSet({ mode: row.mode, numbers: row.numbers, updated_at: row.updated_at }))
    .execute()
}

export async function findStatusPrivacy (db: Db, sessionId: string): Promise<{ mode: PhoneStatusPrivacyTable['mode'], numbers: string[], updatedAt: number } | undefined> {
  const row = await db.selectFrom('phone_status_privacy').selectAll().where('session_id', '=', sessionId).executeTakeFirst()
  return row === undefined ? undefined : { mode: row.mode, numbers: JSON.parse(row.numbers) as string[], updatedAt: row.updated_at }
}

/** Forgets what the phone shared (its contacts and status privacy): the account was logged out. */
export async function forgetPhone (db: Db, sessionId: string): Promise<void> {
  await db.deleteFrom('phone_contacts').where('session_id', '=', sessionId).execute()
  await db.deleteFrom('phone_status_privacy').where('session_id', '=', sessionId).execute()
}
