import type { DatabaseTarget, DbHandle } from '../connection.js'
import { openPostgresStores, postgresStores } from '../postgres/index.js'
import { openSqliteStores, sqliteStores } from '../sqlite/index.js'
import type { OpenedStores, Stores } from './ports.js'

export type { OpenedStores, Stores } from './ports.js'

/**
 * The stores: one port per aggregate (issue 34), every method `Promise<T>`, decorated as `app.stores`
 * (plugins/db/index.ts). Nothing outside `src/db` sees a dialect, a driver, the raw connection or a
 * transaction flag (test/foundation/layout-stores.test.ts).
 *
 * The room (issue 40, docs/architecture.md):
 * - `src/db/stores/`: each port (`<aggregate>.ts`: the interface and the Kysely queries both databases run
 *   the same, built by `<aggregate>Store(db, parts)`), `ports.ts` (the set), `common.ts` (the stores with no
 *   part of a backend's own). No file here names a dialect: what differs is a part the backend hands in.
 * - `src/db/sqlite/` and `src/db/postgres/`: one folder per backend, each with its connection, its parts
 *   (`statusProgress`, `receipts`, `webhookOutbox`, `appendEvents`, …: the same names in both folders) and
 *   `index.ts` building the whole set. On SQLite the hot paths are prepared statements run through
 *   `onSqliteConnection` (sqlite/gate.ts), so they never join another caller's open transaction.
 * - `transaction.ts`: the unit of work, `stores.transaction(async (tx) => …)`, one transactor per aggregate
 *   joined to one transaction (`tx.statuses`, `tx.viewers`, `tx.events` …): no port method takes a transaction
 *   argument. Each port declares the types it takes and returns, camelCase interfaces (`Status`, `ViewerRecord` …),
 *   mapped from and to rows inside the store: plugins import those, never a row type of `database.ts`.
 * - this file: the one place that picks the backend, from the settings (`openStores`) or for a test's
 *   connection (`storesOf`).
 */
/** `plainStatements`: the kept-statements speed trick off (src/speed-tricks.ts; SQLite only) */
export async function openStores (target: DatabaseTarget, opts: { plainStatements?: boolean } = {}): Promise<OpenedStores> {
  return target.url === null ? await openSqliteStores(target.file, opts) : await openPostgresStores(target.url)
}

/** The stores over a connection a test opened itself (the service opens through `openStores`). */
export function storesOf (handle: DbHandle): Stores {
  return handle.dialect === 'sqlite' ? sqliteStores(handle) : postgresStores(handle)
}

/** Where the app keeps the stores' connection for tests (test/support/db.ts `dbOf`); the service reaches data through `app.stores` only. */
export const DB_HANDLE = Symbol.for('status-tracker.db-handle')
