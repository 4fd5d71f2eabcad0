import { openStore, type DatabaseTarget, type DbHandle } from '../connection.js'
import { audienceStore, type AudienceStore } from './audiences.js'
import { contactStatusStore, type ContactStatusStore } from './contact-statuses.js'
import { contactStatusAnswerStore, type ContactStatusAnswerStore } from './contact-status-answers.js'
import { contactStore, type ContactStore } from './contacts.js'
import { scheduleStore, type ScheduleStore } from './schedules.js'
import { eventStore, type EventStore } from './events.js'
import { keysStore, type KeysStore } from './keys.js'
import { systemStore, type SystemStore } from './system.js'
import { webhookStore, type WebhookStore } from './webhooks.js'
import { createStatusStore, type StatusStore } from './statuses.js'
import { createUploadStore, type UploadStore } from './uploads.js'
import { createViewerStore } from './viewer-store.js'
import type { ViewerStore } from './viewers.js'
import { kyselyAuthStateStore, sqliteAuthStateStore, type AuthStateStore } from './auth-state.js'
import { kyselyLeaseStore, type LeaseStore } from './leases.js'
import { kyselySessionStore, sqliteSessionStore, type SessionStore } from './sessions.js'
import { createInsightStore, type InsightStore } from './insights.js'

/**
 * The stores: one port per aggregate (issue 34), every method `Promise<T>`, chosen once at start from the
 * database the settings name and decorated as `app.stores` (plugins/core/db.ts). Nothing outside `src/db`
 * sees a dialect, a driver, the raw connection or a transaction flag: a store is the only place that knows.
 *
 * Each aggregate lives in `src/db/stores/<aggregate>.ts` (port interface + its implementations): one
 * Kysely implementation where both dialects run the same queries, else one per dialect (`…Sqlite`,
 * `…Postgres`) in the same file or a sibling `<aggregate>-pg.ts`. On SQLite every operation goes through
 * Kysely, whose driver serialises use of the one connection; a raw prepared statement runs only through
 * `onSqliteConnection` (sqlite-gate.ts), so it never joins another caller's open transaction.
 */
export interface Stores {
  // ── aggregates: each helper adds its own lines below, one per aggregate ──
  /** saved audiences */
  audiences: AudienceStore
  /** scheduled statuses and their runs */
  schedules: ScheduleStore
  /** the linked phone's saved contacts and status privacy */
  contacts: ContactStore
  /** the statuses the session's contacts posted */
  contactStatuses: ContactStatusStore
  /** the account's likes of and replies to its contacts' statuses */
  contactStatusAnswers: ContactStatusAnswerStore
  /** the event log: appends, the feed's reads, catch-up pages */
  events: EventStore
  /** webhook endpoints and their delivery outbox */
  webhooks: WebhookStore
  /** scoped API keys and upload owners */
  keys: KeysStore
  /** database-wide reads: health's round trip, /stats and /storage totals */
  system: SystemStore
  /** statuses, a send's progress, delivery receipts, pacing's post counts */
  statuses: StatusStore
  /** viewers (the receipt path's commit), reactions and replies */
  viewers: ViewerStore
  /** uploaded media files' rows */
  uploads: UploadStore
  /** what stays of statuses after expiry, and the insights read over them and the live ones (issue 32) */
  insights: InsightStore
  sessions: SessionStore
  leases: LeaseStore
  authState: AuthStateStore
}

/** The stores and the one database they share; `close` ends the connection (after every store is done). */
export interface OpenedStores {
  stores: Stores
  /** `sqlite` (the file) or `postgres`: for the start-up log line and health only */
  describe: () => { database: string }
  close: () => Promise<void>
  /** the connection the stores share: decorated under DB_HANDLE for tests that inspect rows, never for the service */
  handle: DbHandle
}

/** Where the app keeps the stores' connection for tests (test/support/db.ts `dbOf`); the service reaches data through `app.stores` only. */
export const DB_HANDLE = Symbol.for('status-tracker.db-handle')

export function buildStores (handle: DbHandle): Stores {
  return {
    // ── aggregates: each helper adds its own lines below ──
    audiences: audienceStore(handle.db),
    schedules: scheduleStore(handle.db),
    contacts: contactStore(handle.db),
    contactStatuses: contactStatusStore(handle.db),
    contactStatusAnswers: contactStatusAnswerStore(handle.db),
    events: eventStore(handle),
    webhooks: webhookStore(handle),
    keys: keysStore(handle.db),
    system: systemStore(handle),
    statuses: createStatusStore(handle),
    viewers: createViewerStore(handle),
    uploads: createUploadStore(handle),
    insights: createInsightStore(handle),
    sessions: handle.dialect === 'sqlite' ? sqliteSessionStore(handle.db, handle.sqlite) : kyselySessionStore(handle.db, handle.dialect),
    leases: kyselyLeaseStore(handle.db, handle.dialect === 'postgres' ? handle.url : null),
    authState: handle.dialect === 'sqlite' ? sqliteAuthStateStore(handle.db, handle.sqlite) : kyselyAuthStateStore(handle.db)
  }
}

/** `plainStatements`: the kept-statements speed trick off (src/speed-tricks.ts) */
export async function openStores (target: DatabaseTarget, opts: { plainStatements?: boolean } = {}): Promise<OpenedStores> {
  const handle = await openStore(target, opts)
  return {
    stores: buildStores(handle),
    describe: () => ({ database: handle.dialect === 'postgres' ? 'postgres' : handle.file }),
    close: async () => { await handle.close() },
    handle
  }
}
