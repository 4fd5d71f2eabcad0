import { statSync } from 'node:fs'
import { sql } from 'kysely'
import { authStateStore } from '../stores/auth-state.js'
import { commonStores } from '../stores/common.js'
import { eventStore } from '../stores/events.js'
import { insightStore } from '../stores/insights.js'
import { viewerStore } from '../stores/interactions.js'
import { leaseStore } from '../stores/leases.js'
import type { OpenedStores, Stores } from '../stores/ports.js'
import { sessionStore } from '../stores/sessions.js'
import { statusStore } from '../stores/statuses.js'
import { systemStore } from '../stores/system.js'
import { uploadStore } from '../stores/uploads.js'
import { unitOfWork } from '../stores/transaction.js'
import { webhookStore } from '../stores/webhooks.js'
import { preparedAuthState } from './auth-state.js'
import { openDatabase, type SqliteHandle } from './connection.js'
import { appendEvents, preparedEvents } from './events.js'
import { insightBackend } from './insights.js'
import { preparedLinkWrites, preparedSessionList } from './sessions.js'
import { listSent, statusProgress } from './statuses.js'
import { receipts } from './viewers.js'
import { webhookOutbox } from './webhooks.js'

// The SQLite backend: the shared Kysely stores (src/db/stores/) given SQLite's parts, and the hot paths as
// prepared statements on the one connection (run through gate.ts, so never inside another caller's open
// transaction). One process owns the file: nothing is `shared`, and no lease renews on connections of its own.

/** the database's clock in milliseconds since the epoch */
const CLOCK = sql<string>`cast((julianday('now') - 2440587.5) * 86400000 as integer)`

export function sqliteStores (handle: SqliteHandle): Stores {
  const { db, sqlite, file } = handle
  return {
    ...commonStores(db),
    events: { ...eventStore(db, { shared: false, append: appendEvents }), ...preparedEvents(db, sqlite) },
    webhooks: webhookStore(db, { shared: false, outbox: () => webhookOutbox(db) }),
    system: systemStore(db, async () => ({ file, bytes: fileSize(file), walBytes: fileSize(`${file}-wal`) })),
    // the kept-statements speed trick off (src/speed-tricks.ts): the list is the shared Kysely query
    statuses: handle.plainStatements === true
      ? statusStore(db, statusProgress(db, sqlite))
      : { ...statusStore(db, statusProgress(db, sqlite)), listSent: listSent(db, sqlite) },
    viewers: viewerStore(db, receipts(db, sqlite)),
    uploads: uploadStore(db, false),
    insights: insightStore(db, insightBackend),
    // kept-statements off: every session listed through Kysely
    sessions: {
      ...sessionStore(db, appendEvents), ...preparedLinkWrites(db, sqlite), ...(handle.plainStatements === true ? {} : preparedSessionList(db, sqlite))
    },
    leases: leaseStore(db, { clock: CLOCK, renewals: null }),
    authState: { ...authStateStore(db), ...preparedAuthState(db, sqlite) },
    transaction: unitOfWork(db, { append: appendEvents, insights: insightBackend, clock: CLOCK })
  }
}

export async function openSqliteStores (file: string, opts: { plainStatements?: boolean } = {}): Promise<OpenedStores> {
  const handle = await openDatabase(file, opts)
  return { stores: sqliteStores(handle), describe: () => ({ database: file }), close: handle.close, handle }
}

function fileSize (path: string): number {
  try { return statSync(path).size } catch { return 0 }
}
