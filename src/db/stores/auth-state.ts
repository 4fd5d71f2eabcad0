import type { Kysely } from 'kysely'
import type { Database } from '../database.js'

type Db = Kysely<Database>

/** One key write: a value to store, or null to delete the key. */
export type KeyWrite = [type: string, id: string, value: string | null]

/** A session's stored auth state, as text (Baileys' serialisation is the platform's business). */
export interface StoredAuth {
  creds: string | undefined
  keys: Array<[type: string, id: string, value: string]>
}

/**
 * Baileys' auth state (creds + Signal keys) in the database, for the platform's adapter
 * (src/platform/auth-state.ts). Each write is one transaction, so a crash at any point leaves rows that
 * still log in; the rows of a session are private account keys (the database file is 0600, file-modes.ts).
 */
export interface AuthStateStore {
  /** every auth row of the session in one read, but those of the types in `skip` (read by `readKeys` when asked for) */
  load: (sessionId: string, skip?: readonly string[]) => Promise<StoredAuth>
  /** the stored values of these keys of one type (absent: not stored) */
  readKeys: (sessionId: string, type: string, ids: readonly string[]) => Promise<Array<[id: string, value: string]>>
  writeCreds: (sessionId: string, text: string, at: number) => Promise<void>
  /** the puts and deletes of one `keys.set`, in one transaction */
  writeKeys: (sessionId: string, writes: KeyWrite[]) => Promise<void>
  /** every auth row of the session, in one transaction */
  clear: (sessionId: string) => Promise<void>
}

/** rows per statement: 4 parameters each, far below SQLite's 32,766 and PostgreSQL's 65,535 */
const BATCH = 500

/** The queries both backends run the same; SQLite replaces `load` and `writeKeys` (src/db/sqlite/auth-state.ts). */
export function authStateStore (db: Db): AuthStateStore {
  return {
    async load (sessionId, skip = []) {
      const creds = await db.selectFrom('auth_creds').select('creds').where('session_id', '=', sessionId).executeTakeFirst()
      const keys = await db.selectFrom('auth_keys').select(['type', 'key_id', 'value']).where('session_id', '=', sessionId)
        .$if(skip.length > 0, (q) => q.where('type', 'not in', skip)).execute()
      return { creds: creds?.creds, keys: keys.map((k) => [k.type, k.key_id, k.value]) }
    },
    async readKeys (sessionId, type, ids) {
      const out: Array<[string, string]> = []
      for (let i = 0; i < ids.length; i += BATCH) {
        const rows = await db.selectFrom('auth_keys').select(['key_id', 'value'])
          .where('session_id', '=', sessionId).where('type', '=', type).where('key_id', 'in', ids.slice(i, i + BATCH)).execute()
        for (const r of rows) out.push([r.key_id, r.value])
      }
      return out
    },
    async writeCreds (sessionId, text, at) {
      await db.insertInto('auth_creds').values({ session_id: sessionId, creds: text, updated_at: at })
        .onConflict((oc) => oc.column('session_id').doUpdateSet((eb) => ({ creds: eb.ref('excluded.creds'), updated_at: eb.ref('excluded.updated_at') })))
        .execute()
    },
    async writeKeys (sessionId, rows) {
      const puts = rows.flatMap(([type, keyId, value]) => value === null ? [] : [{ session_id: sessionId, type, key_id: keyId, value }])
      const deletes = new Map<string, string[]>()
      for (const [type, keyId, value] of rows) if (value === null) deletes.set(type, [...deletes.get(type) ?? [], keyId])
      await db.transaction().execute(async (trx) => {
        // a few statements for the batch (Baileys writes hundreds of pre-keys at once)
        for (let i = 0; i < puts.length; i += BATCH) {
          await trx.insertInto('auth_keys').values(puts.slice(i, i + BATCH))
            .onConflict((oc) => oc.columns(['session_id', 'type', 'key_id']).doUpdateSet((eb) => ({ value: eb.ref('excluded.value') })))
            .execute()
        }
        for (const [type, ids] of deletes) {
          for (let i = 0; i < ids.length; i += BATCH) {
            await trx.deleteFrom('auth_keys').where('session_id', '=', sessionId).where('type', '=', type).where('key_id', 'in', ids.slice(i, i + BATCH)).execute()
          }
        }
      })
    },
    async clear (sessionId) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('auth_keys').where('session_id', '=', sessionId).execute()
        await trx.deleteFrom('auth_creds').where('session_id', '=', sessionId).execute()
      })
    }
  }
}
