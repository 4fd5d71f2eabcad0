import type SQLiteTypes from 'better-sqlite3'
import type { Kysely } from 'kysely'
import type { Database } from '../database.js'
import { authStateStore, type AuthStateStore, type KeyWrite } from '../stores/auth-state.js'
import { onSqliteConnection } from './gate.js'

type Db = Kysely<Database>

/**
 * The auth state's `load` and `writeKeys` on SQLite as prepared statements in one better-sqlite3 transaction. A first
 * post to new contacts writes a Signal session per device (1,000 contacts: ~1,000 rows in a few `keys.set`s,
 * each awaited by Baileys before the relay goes on): through Kysely the bench's "first post to 1,000 new
 * contacts ÷ stock Baileys" went 0.43 → 0.53 (issue 34's before/after), with these statements it is back.
 */
export function preparedAuthState (db: Db, sqlite: SQLiteTypes.Database): Pick<AuthStateStore, 'load' | 'writeKeys'> {
  const putKey = sqlite.prepare<[string, string, string, string]>(
    'INSERT INTO auth_keys (session_id, type, key_id, value) VALUES (?, ?, ?, ?) ' +
    'ON CONFLICT (session_id, type, key_id) DO UPDATE SET value = excluded.value'
  )
  const deleteKey = sqlite.prepare<[string, string, string]>('DELETE FROM auth_keys WHERE session_id = ? AND type = ? AND key_id = ?')
  const getCreds = sqlite.prepare<[string], string>('SELECT creds FROM auth_creds WHERE session_id = ?').pluck()
  const getKeys = sqlite.prepare<[string], [string, string, string]>('SELECT type, key_id, value FROM auth_keys WHERE session_id = ?').raw()
  // the platform's one on-demand type (pre-keys); any other list goes through Kysely
  const getKeysBut = sqlite.prepare<[string, string], [string, string, string]>('SELECT type, key_id, value FROM auth_keys WHERE session_id = ? AND type <> ?').raw()
  const write = sqlite.transaction((sessionId: string, rows: KeyWrite[]) => {
    for (const [type, keyId, value] of rows) {
      if (value === null) deleteKey.run(sessionId, type, keyId)
      else putKey.run(sessionId, type, keyId, value)
    }
  })
  const kysely = authStateStore(db)
  return {
    // every stored session loads its rows before its socket starts: the start with 100 sessions ("spawn → all
    // open", bench startup) went 3.7 → 4.7 s through Kysely's row objects
    load: async (sessionId, skip = []) => skip.length > 1
      ? await kysely.load(sessionId, skip)
      : await onSqliteConnection(db, sqlite, () => ({
          creds: getCreds.get(sessionId),
          keys: skip.length === 0 ? getKeys.all(sessionId) : getKeysBut.all(sessionId, skip[0])
        })),
    writeKeys: async (sessionId, rows) => { await onSqliteConnection(db, sqlite, () => { write(sessionId, rows) }) }
  }
}
