import type { Kysely } from 'kysely'
import type { Database } from '../database.js'
import { contactStatusStore, type ContactStatusStore } from './contact-statuses.js'
import type { AppendEvents, NewEvent } from './events.js'
import { insightStore, type InsightBackend, type InsightStore } from './insights.js'
import { interactions } from './interactions.js'
import { insertLease, type LeaseBackend } from './leases.js'
import { scheduleStore, type ScheduleStore } from './schedules.js'
import { sessionStore, type SessionStore } from './sessions.js'
import { statusQueries, type StatusStore } from './statuses.js'
import type { ViewerStore } from './viewers.js'

// The unit of work (issue 40): `stores.transaction(async (tx) => …)` runs `work` in one transaction and hands
// it one transactor per aggregate, each the port's own methods (no trailing transaction argument), joined to
// that transaction: committed together when `work` resolves, nothing when it throws. The events a change
// reports go in last (`tx.events.append`), so PostgreSQL's log lock is held only for the append and the commit.

/** The aggregates' methods that join a unit of work. */
export interface Transactors {
  statuses: Pick<StatusStore, 'find' | 'setUnreachable' | 'finish' | 'remove' | 'setError' | 'deleteBefore'>
  viewers: Pick<ViewerStore, 'recordReaction' | 'recordReply'>
  insights: Pick<InsightStore, 'keepExpired' | 'keep' | 'forget' | 'prune'>
  schedules: Pick<ScheduleStore, 'takeRun' | 'finishRun'>
  contactStatuses: Pick<ContactStatusStore, 'record'>
  sessions: Pick<SessionStore, 'insert' | 'remove'>
  /** a new session's lease for `nodeId` (cluster mode), stored with the session so no node sees it unowned */
  leases: { hold: (sessionId: string, nodeId: string, ttlMs: number) => Promise<void> }
  /** the events reporting the change: appended in this transaction (call it last) */
  events: { append: (events: NewEvent[]) => Promise<void> }
}

/** `stores.transaction`: runs `work` in one transaction with the transactors joined to it. */
export type UnitOfWork = <T>(work: (tx: Transactors) => Promise<T>) => Promise<T>

/** What a backend hands the unit of work: its event append, its insights' parts and its clock. */
export interface TransactionBackend { append: AppendEvents, insights: InsightBackend, clock: LeaseBackend['clock'] }

export function unitOfWork (db: Kysely<Database>, backend: TransactionBackend): UnitOfWork {
  return async (work) => await db.transaction().execute(async (trx) => await work(transactors(trx, backend)))
}

function transactors (trx: Kysely<Database>, backend: TransactionBackend): Transactors {
  const statuses = statusQueries(trx)
  const viewers = interactions(trx)
  const insights = insightStore(trx, backend.insights)
  const schedules = scheduleStore(trx)
  const sessions = sessionStore(trx, backend.append)
  return {
    statuses: {
      find: statuses.find, setUnreachable: statuses.setUnreachable, finish: statuses.finish,
      remove: statuses.remove, setError: statuses.setError, deleteBefore: statuses.deleteBefore
    },
    viewers: { recordReaction: viewers.recordReaction, recordReply: viewers.recordReply },
    insights: { keepExpired: insights.keepExpired, keep: insights.keep, forget: insights.forget, prune: insights.prune },
    schedules: { takeRun: schedules.takeRun, finishRun: schedules.finishRun },
    contactStatuses: { record: contactStatusStore(trx).record },
    sessions: { insert: sessions.insert, remove: sessions.remove },
    leases: { hold: async (sessionId, nodeId, ttlMs) => { await insertLease(trx, backend.clock, sessionId, nodeId, ttlMs) } },
    events: { append: async (events) => { await backend.append(trx, events) } }
  }
}
