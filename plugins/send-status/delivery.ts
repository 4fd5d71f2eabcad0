import type { FastifyError } from 'fastify'
import type { Status } from '../../src/db/stores/statuses.js'
import type { NewEvent } from '../../src/db/stores/events.js'
import type { SendProgress, StatusContent, StatusSetting } from '../../src/platform/types.js'
import type { SendStatusBody } from '../../schemas/status.js'
import { toLogRow } from '../events/log.js'
import type { SendStatusDeps } from './deps.js'

// The pieces of a send's recorded life (sending.ts) that need none of its state.

/** What one send (or resumed send) needs. */
export interface Delivery {
  statusId: number
  sessionId: string
  messageId: string
  ownNumber: string
  /** recipient digits (or `<lid>@lid`) without the own number; empty: the own number only */
  recipients: string[]
  /** the post's status_setting (an audience chose it); undefined: the platform's default (allowlist) */
  statusSetting?: StatusSetting
  /** numbers the status mentions (send-status `mentions`; they are among the recipients) */
  mentions?: string[]
  contactCount: number
  content?: StatusContent
  /** the stored message of an interrupted send */
  prepared?: Uint8Array
  /** JIDs committed by an earlier attempt */
  done: string[]
  /** what status-sent shows */
  shown: { type: SendStatusBody['type'], content: string, caption: string, createdAt: number }
}

/** The row vanished while its send ran (its session was deleted): the send stops. */
export class StatusGone extends Error {
  constructor () { super('the status was deleted while it was being sent') }
}

export function isCode (err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as FastifyError).code === code
}

/** Recipients as contactCount counts them: the own number only when it is the only one addressed. */
export function countContacts (have: Set<string>, ownJid: string, ownOnly: boolean): number {
  const own = have.has(ownJid) ? 1 : 0
  return ownOnly ? own : have.size - own
}

/** The status-send-progress a chunk's commit appends to the event log (none for a single chunk). */
export function progressReport (d: Pick<Delivery, 'sessionId' | 'statusId'>, step: SendProgress | null): NewEvent[] {
  return step === null ? [] : [toLogRow('status-send-progress', { sessionId: d.sessionId, statusId: String(d.statusId), sent: step.sent, total: step.total })]
}

/** A promise that may reject without anyone awaiting it yet. */
export function quiet<T> (promise: Promise<T>): Promise<T> {
  promise.catch(() => {})
  return promise
}

/** What a send that reached everyone it could did: `sent to N contacts` (and how many had no LID). */
export function sentMessage (reached: number, unreachable: readonly string[]): string {
  const missed = unreachable.length > 0 ? `; ${unreachable.length} unreachable (no LID)` : ''
  return `sent to ${reached} contact${reached === 1 ? '' : 's'}${missed}`
}

/** What a send that stopped part-way did; `unsure` names the recipients that may have it. */
export function stoppedMessage (sentCount: number, contactCount: number, maybe: number, reason: string): { message: string, unsure: string } {
  const unsure = maybe > 0 ? ` (${maybe} more may have it: the link closed before the platform confirmed them; a revoke includes them)` : ''
  return { message: `Status sent to ${sentCount} of ${contactCount} contact${contactCount === 1 ? '' : 's'}; sending stopped: ${reason}${unsure}`, unsure }
}

/** A row a crash left `sending` that cannot be resumed: partial with what it has, or removed when nobody has (or may have) it. */
export async function abandon ({ events, log }: Pick<SendStatusDeps, 'events' | 'log'>, row: Status, have: number, why: string): Promise<void> {
  const id = String(row.id)
  if (have === 0) {
    const removed = await events.within(async (tx, emit) => {
      if (!await tx.statuses.remove(row.id)) return false
      emit('statuses-updated', { sessionId: row.sessionId, statusId: id, action: 'send-failed', message: `Status ${id} was not sent: ${why}` })
      return true
    })
    if (removed) log.warn({ sessionId: row.sessionId, statusId: row.id, why }, 'interrupted send had reached nobody; removed')
    return
  }
  const message = `Status sent to ${row.sentCount} of ${row.contactCount}; not resumed: ${why}`
  const kept = await events.within(async (tx, emit) => {
    if (!await tx.statuses.finish(row.id, { state: 'partial', sentCount: row.sentCount, error: `Sending stopped after ${row.sentCount} of ${row.contactCount}: ${why}` })) return false
    emit('statuses-updated', { sessionId: row.sessionId, statusId: id, action: 'partial', message: `Status ${id}: ${message}` })
    return true
  })
  if (kept) log.warn({ sessionId: row.sessionId, statusId: row.id, sentCount: row.sentCount, why }, 'interrupted send not resumed; kept as partial')
}
