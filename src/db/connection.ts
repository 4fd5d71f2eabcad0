import type { SqliteHandle } from './sqlite/connection.js'
import type { PostgresHandle } from './postgres/connection.js'

// The connection of either backend (src/db/sqlite/, src/db/postgres/), as tests and the stores' one choice
// (stores/index.ts) see it. Each backend opens its own; nothing else here names a dialect.

export type { SqliteHandle } from './sqlite/connection.js'
export type { PostgresHandle } from './postgres/connection.js'
export { openDatabase } from './sqlite/connection.js'
export { openPostgres, openLeaseDb } from './postgres/connection.js'

export type DbHandle = SqliteHandle | PostgresHandle

/** Where the data lives: a PostgreSQL URL when set, else the SQLite file. */
export interface DatabaseTarget { url: string | null, file: string }
