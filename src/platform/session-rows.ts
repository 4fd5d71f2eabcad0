import type SQLite from 'better-sqlite3'
import type { AuthMethod } from './types.js'

/** The few `sessions` columns the platform reads and writes, as prepared statements (synchronous, ordered). */
export interface SessionRows {
  list: () => Array<{ id: string, authMethod: AuthMethod, phoneNumber: string | null }>
  get: (id: string) => { id: string, authMethod: AuthMethod, phoneNumber: string | null } | undefined
  markLinked: (id: string, ownNumber: string | null, ownLid: string | null) => void
  markUnlinked: (id: string) => void
}

interface Row { id: string, auth_method: AuthMethod, phone_number: string | null }

export function createSessionRows (sqlite: SQLite.Database): SessionRows {
  const list = sqlite.prepare<[], Row>('SELECT id, auth_method, phone_number FROM sessions ORDER BY created_at, id')
  const get = sqlite.prepare<[string], Row>('SELECT id, auth_method, phone_number FROM sessions WHERE id = ?')
  const linked = sqlite.prepare<[string | null, string | null, string]>('UPDATE sessions SET own_number = ?, own_lid = ?, linked = 1 WHERE id = ?')
  const unlinked = sqlite.prepare<[string]>('UPDATE sessions SET own_number = NULL, own_lid = NULL, linked = 0 WHERE id = ?')
  const toSpec = (r: Row): { id: string, authMethod: AuthMethod, phoneNumber: string | null } =>
    ({ id: r.id, authMethod: r.auth_method, phoneNumber: r.phone_number })
  return {
    list: () => list.all().map(toSpec),
    get: (id) => {
      const row = get.get(id)
      return row === undefined ? undefined : toSpec(row)
    },
    markLinked: (id, ownNumber, ownLid) => { linked.run(ownNumber, ownLid, id) },
    markUnlinked: (id) => { unlinked.run(id) }
  }
}
