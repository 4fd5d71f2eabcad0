import type SQLite from 'better-sqlite3'
import type { SessionTable } from '../database.js'

export interface StoredSession { id: string, authMethod: SessionTable['auth_method'], phoneNumber: string | null }

/**
 * The `sessions` columns the platform reads and writes (it depends on this shape, not on the database).
 * Prepared statements rather than Kysely: they run synchronously inside socket events, so the row says
 * "linked" before the `open` event that announces it leaves.
 */
export function createSessionLinks (sqlite: SQLite.Database) {
  type Row = { id: string, auth_method: SessionTable['auth_method'], phone_number: string | null }
  const list = sqlite.prepare<[], Row>('SELECT id, auth_method, phone_number FROM sessions ORDER BY created_at, id')
  const get = sqlite.prepare<[string], Row>('SELECT id, auth_method, phone_number FROM sessions WHERE id = ?')
  const linked = sqlite.prepare<[string | null, string | null, string]>('UPDATE sessions SET own_number = ?, own_lid = ?, linked = 1 WHERE id = ?')
  const unlinked = sqlite.prepare<[string]>('UPDATE sessions SET own_number = NULL, own_lid = NULL, linked = 0 WHERE id = ?')
  const toStored = (r: Row): StoredSession => ({ id: r.id, authMethod: r.auth_method, phoneNumber: r.phone_number })
  return {
    list: (): StoredSession[] => list.all().map(toStored),
    get: (id: string): StoredSession | undefined => {
      const row = get.get(id)
      return row === undefined ? undefined : toStored(row)
    },
    markLinked: (id: string, ownNumber: string | null, ownLid: string | null): void => { linked.run(ownNumber, ownLid, id) },
    markUnlinked: (id: string): void => { unlinked.run(id) }
  }
}
