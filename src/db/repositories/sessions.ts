import type { Kysely } from 'kysely'
import type { Database, SessionRow } from '../database.js'

// Transitional: the services not moved to `app.stores.sessions` yet (src/db/stores/sessions.ts) look a session up here.

type Db = Kysely<Database>

export async function findSession (db: Db, sessionId: string): Promise<SessionRow | undefined> {
  return await db.selectFrom('sessions').selectAll().where('id', '=', sessionId).executeTakeFirst()
}
