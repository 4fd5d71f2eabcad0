import type { DbHandle } from '../connection.js'
import type { AudienceStore } from './audiences.js'
import type { ContactStatusStore } from './contact-statuses.js'
import type { ContactStatusAnswerStore } from './contact-status-answers.js'
import type { ContactStore } from './contacts.js'
import type { ScheduleStore } from './schedules.js'
import type { EventStore } from './events.js'
import type { KeysStore } from './keys.js'
import type { SystemStore } from './system.js'
import type { WebhookStore } from './webhooks.js'
import type { StatusStore } from './statuses.js'
import type { UploadStore } from './uploads.js'
import type { ViewerStore } from './viewers.js'
import type { AuthStateStore } from './auth-state.js'
import type { LeaseStore } from './leases.js'
import type { SessionStore } from './sessions.js'
import type { InsightStore } from './insights.js'
import type { UnitOfWork } from './transaction.js'

// The ports: one per aggregate, every method `Promise<T>` (issue 34). Each backend (src/db/sqlite/,
// src/db/postgres/) builds the whole set; stores/index.ts picks one, once.

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
  /** the unit of work: `transaction(async (tx) => …)` hands one transactor per aggregate, joined to one transaction (transaction.ts) */
  transaction: UnitOfWork
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
