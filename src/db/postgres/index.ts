import { sql, type Kysely } from 'kysely'
import type { Database } from '../database.js'
import { authStateStore } from '../stores/auth-state.js'
import { commonStores } from '../stores/common.js'
import { eventStore } from '../stores/events.js'
import { insightStore } from '../stores/insights.js'
import { viewerStore } from '../stores/interactions.js'
import { leaseStore, type LeaseStore } from '../stores/leases.js'
import type { OpenedStores, Stores } from '../stores/ports.js'
import { sessionStore } from '../stores/sessions.js'
import { statusStore } from '../stores/statuses.js'
import { systemStore } from '../stores/system.js'
import { uploadStore } from '../stores/uploads.js'
import { unitOfWork } from '../stores/transaction.js'
import { webhookStore } from '../stores/webhooks.js'
import { openLeaseDb, openPostgres, type PostgresHandle } from './connection.js'
import { appendEvents } from './events.js'
import { insightBackend } from './insights.js'
import { statusProgress } from './statuses.js'
import { receipts } from './viewers.js'
import { webhookOutbox } from './webhooks.js'

// The PostgreSQL backend: the shared Kysely stores (src/db/stores/) given PostgreSQL's parts. Several nodes
// may share the server: the event log, the outbox and the upload rows are `shared`, every event append takes
// the log's lock (events.ts), and lease renewals run on connections of their own (connection.ts openLeaseDb).

/** the database's clock in milliseconds since the epoch */
const CLOCK = sql<string>`(extract(epoch from clock_timestamp()) * 1000)::bigint`

export function postgresStores (handle: PostgresHandle): Stores {
  const { db, pool, url } = handle
  return {
    ...commonStores(db),
    events: eventStore(db, { shared: true, append: appendEvents }),
    webhooks: webhookStore(db, { shared: true, outbox: (claim) => webhookOutbox(db, claim) }),
    system: systemStore(db, async () => {
      const { rows } = await sql<{ n: number | string }>`select pg_database_size(current_database()) as n`.execute(db)
      return { file: 'postgresql', bytes: Number(rows[0].n), walBytes: 0 }
    }),
    statuses: statusStore(db, statusProgress(db)),
    viewers: viewerStore(db, receipts(db, pool)),
    uploads: uploadStore(db, true),
    insights: insightStore(db, insightBackend),
    sessions: sessionStore(db, appendEvents),
    leases: leaseStore(db, { clock: CLOCK, renewals: (opts) => openLeaseDb(url, opts) }),
    authState: authStateStore(db),
    transaction: unitOfWork(db, { append: appendEvents, insights: insightBackend, clock: CLOCK })
  }
}

export async function openPostgresStores (url: string): Promise<OpenedStores> {
  const handle = await openPostgres(url)
  return { stores: postgresStores(handle), describe: () => ({ database: 'postgres' }), close: handle.close, handle }
}

/** The lease store on a connection of its own (a test's node, or a renewal pool): no renewals of its own. */
export function leasesOn (db: Kysely<Database>): LeaseStore {
  return leaseStore(db, { clock: CLOCK, renewals: null })
}
