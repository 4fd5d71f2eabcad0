import type { Kysely } from 'kysely'
import type { ApiKeyRow, Database } from '../database.js'

// Scoped API keys: rare writes, one read per key look-up on PostgreSQL (another node may have revoked it).
// The same Kysely queries on SQLite and PostgreSQL.

type Db = Kysely<Database>

export async function insertKey (db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute()
}

export async function findKey (db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Every key, oldest first. */
export async function listKeys (db: Db): Promise<ApiKeyRow[]> {
  return await db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id').execute()
}

/** Removes the key; returns whether it existed. */
export async function deleteKey (db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('api_keys').where('id', '=', id).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/**
 * Adds a session to a key's list (a `manage` key created it) in one statement per attempt: the list is
 * read and written back only if nobody changed it in between, so two creations at once both land.
 */
export async function addKeySession (db: Db, id: string, sessionId: string): Promise<ApiKeyRow | undefined> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const row = await findKey(db, id)
    if (row === undefined || row.sessions === '*') return row
    const list = JSON.parse(row.sessions) as string[]
    if (list.includes(sessionId)) return row
    const sessions = JSON.stringify([...list, sessionId])
    const result = await db.updateTable('api_keys').set({ sessions }).where('id', '=', id).where('sessions', '=', row.sessions).executeTakeFirst()
    if (result.numUpdatedRows > 0n) return { ...row, sessions }
  }
  throw new Error('the key\'s session list kept changing')
}

/** Takes a deleted session off every key's list (a later session of the same id is not theirs). */
export async function removeSessionFromKeys (db: Db, sessionId: string): Promise<void> {
  const rows = await db.selectFrom('api_keys').select(['id', 'sessions']).where('sessions', '<>', '*').execute()
  for (const row of rows) {
    const list = JSON.parse(row.sessions) as string[]
    if (!list.includes(sessionId)) continue
    await db.updateTable('api_keys').set({ sessions: JSON.stringify(list.filter((s) => s !== sessionId)) })
      .where('id', '=', row.id).where('sessions', '=', row.sessions).execute()
  }
}

/** Marks an upload as made with a scoped key. */
export async function setUploadOwner (db: Db, filename: string, keyId: string): Promise<void> {
  await db.insertInto('upload_owners').values({ filename, key_id: keyId }).onConflict((oc) => oc.column('filename').doNothing()).execute()
}

/** The scoped key an upload was made with; null: the admin key's (or no such upload). */
export async function uploadOwner (db: Db, filename: string): Promise<string | null> {
  const row = await db.selectFrom('upload_owners').select('key_id').where('filename', '=', filename).executeTakeFirst()
  return row?.key_id ?? null
}
