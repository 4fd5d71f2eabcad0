import type { Kysely } from 'kysely'
import type { ApiKeyRow, Database } from '../database.js'

/** A scoped API key as stored (its hash, never the key): the port's own type (plugins never see the table's row). */
export interface ApiKey {
  /** the `<id>` of `stk_<id>_<secret>` */
  id: string
  name: string
  /** hex SHA-256 of the secret */
  secretHash: string
  /** '*' or a JSON array of session ids */
  sessions: string
  /** JSON array of scopes */
  scopes: string
  createdAt: number
}

/** The one row → ApiKey mapping, for both backends. */
export function toApiKey (r: ApiKeyRow): ApiKey {
  return { id: r.id, name: r.name, secretHash: r.secret_hash, sessions: r.sessions, scopes: r.scopes, createdAt: Number(r.created_at) }
}

/**
 * Scoped API keys and which key made an upload: rare writes, one read per key look-up (another node may
 * have revoked the key). The same Kysely queries on SQLite and PostgreSQL.
 */
export interface KeysStore {
  insert: (key: ApiKey) => Promise<void>
  find: (id: string) => Promise<ApiKey | undefined>
  /** every key, oldest first */
  list: () => Promise<ApiKey[]>
  /** removes the key; whether it existed */
  remove: (id: string) => Promise<boolean>
  /**
   * adds a session to a key's list (a `manage` key created it): the list is written back only if nobody
   * changed it in between, so two creations at once both land
   */
  addSession: (id: string, sessionId: string) => Promise<ApiKey | undefined>
  /** takes a deleted session off every key's list (a later session of the same id is not theirs) */
  removeSession: (sessionId: string) => Promise<void>
  /** marks an upload as made with a scoped key */
  setUploadOwner: (filename: string, keyId: string) => Promise<void>
  /** the scoped key an upload was made with; null: the admin key's (or no such upload) */
  uploadOwner: (filename: string) => Promise<string | null>
}

export function keysStore (db: Kysely<Database>): KeysStore {
  const find = async (id: string): Promise<ApiKey | undefined> => {
    const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
    return row === undefined ? undefined : toApiKey(row)
  }
  return {
    async insert (k) {
      await db.insertInto('api_keys').values({ id: k.id, name: k.name, secret_hash: k.secretHash, sessions: k.sessions, scopes: k.scopes, created_at: k.createdAt }).execute()
    },
    find,
    list: async () => (await db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id').execute()).map(toApiKey),
    async remove (id) {
      const result = await db.deleteFrom('api_keys').where('id', '=', id).executeTakeFirst()
      return result.numDeletedRows > 0n
    },
    async addSession (id, sessionId) {
      for (let attempt = 0; attempt < 10; attempt++) {
        const row = await find(id)
        if (row === undefined || row.sessions === '*') return row
        const list = JSON.parse(row.sessions) as string[]
        if (list.includes(sessionId)) return row
        const sessions = JSON.stringify([...list, sessionId])
        const result = await db.updateTable('api_keys').set({ sessions }).where('id', '=', id).where('sessions', '=', row.sessions).executeTakeFirst()
        if (result.numUpdatedRows > 0n) return { ...row, sessions }
      }
      throw new Error('the key\'s session list kept changing')
    },
    async removeSession (sessionId) {
      const rows = await db.selectFrom('api_keys').select(['id', 'sessions']).where('sessions', '<>', '*').execute()
      for (const row of rows) {
        const list = JSON.parse(row.sessions) as string[]
        if (!list.includes(sessionId)) continue
        await db.updateTable('api_keys').set({ sessions: JSON.stringify(list.filter((s) => s !== sessionId)) })
          .where('id', '=', row.id).where('sessions', '=', row.sessions).execute()
      }
    },
    async setUploadOwner (filename, keyId) {
      await db.insertInto('upload_owners').values({ filename, key_id: keyId }).onConflict((oc) => oc.column('filename').doNothing()).execute()
    },
    async uploadOwner (filename) {
      const row = await db.selectFrom('upload_owners').select('key_id').where('filename', '=', filename).executeTakeFirst()
      return row?.key_id ?? null
    }
  }
}
