import type { FastifyBaseLogger } from 'fastify'
import type { LoggedEvent } from '../../src/db/stores/events.js'
import type { LoggedEventHead, NewDelivery, WebhookOutbox } from '../../src/db/stores/webhooks.js'

/** Logged events turned into deliveries per transaction. */
const PAGE = 500
/** A shared outbox: how long to wait when another node holds the dispatch cursor, and how often to look anyway. */
const BUSY_RETRY_MS = 200
const BACKSTOP_MS = 2000

/** One message id per event: the same on every attempt, to every endpoint, and if a crash makes it again. */
export const messageIdOf = (eventId: number): string => `msg_ev${eventId}`

/**
 * Deliveries with the same key reach an endpoint one after another: one status's events, or else one
 * session's other events (connection changes, codes).
 */
export function orderKeyOf (payload: { sessionId?: unknown, statusId?: unknown }): string {
  const sessionId = typeof payload.sessionId === 'string' ? payload.sessionId : ''
  return typeof payload.statusId === 'string' && payload.statusId !== ''
    ? `status:${sessionId}:${payload.statusId}`
    : `session:${sessionId}`
}

export interface DispatchDeps {
  outbox: WebhookOutbox
  log: FastifyBaseLogger
  /** the endpoints that take this event, happened at `at` */
  targets: (event: string, sessionId: string | null, at: number) => string[]
  /** deliveries were written: wake the worker */
  written: () => void
}

/**
 * Webhook deliveries made from the event log: the events past the `webhooks` cursor become one delivery
 * per matching endpoint, and the cursor moves past them, in one transaction. A crash before that commit
 * leaves the events past the cursor: the next start makes their deliveries. Woken by every event the
 * log's feed hands out (after the event's commit), at start, and (several nodes on one cursor) every BACKSTOP_MS.
 */
export function createLogDispatcher (deps: DispatchDeps) {
  const { outbox, log } = deps
  let scheduled = false
  let running: Promise<void> | null = null
  let again = false
  let stopped = true
  let backstop: NodeJS.Timeout | null = null

  const takes = (e: LoggedEventHead): boolean => deps.targets(e.type, e.sessionId, Number(e.createdAt)).length > 0
  function build (events: LoggedEvent[]): NewDelivery[] {
    const rows: NewDelivery[] = []
    for (const e of events) {
      const eventId = Number(e.id)
      const at = Number(e.createdAt)
      const targets = deps.targets(e.type, e.sessionId, at)
      if (targets.length === 0) continue
      const payload = JSON.parse(e.data) as Record<string, unknown>
      const body = JSON.stringify({ type: e.type, timestamp: new Date(at).toISOString(), eventId, data: { ...payload, eventId } })
      const messageId = messageIdOf(eventId)
      const orderKey = orderKeyOf(payload)
      for (const webhookId of targets) rows.push({ webhookId, messageId, eventType: e.type, sessionId: e.sessionId, orderKey, body, at })
    }
    return rows
  }

  function later (ms: number): void {
    setTimeout(kick, ms).unref()
  }

  function kick (): void {
    if (stopped || scheduled) return
    scheduled = true
    // after the turn: the commits of one turn are dispatched together
    setImmediate(run)
  }

  function run (): void {
    scheduled = false
    if (stopped) return
    if (running !== null) { again = true; return }
    running = outbox.fromLog(PAGE, { takes, build }).then((n) => {
      running = null
      if (n > 0) deps.written()
      if (n === -1) later(BUSY_RETRY_MS)
      else if (n === PAGE || again) { again = false; kick() }
    }, (err: unknown) => {
      running = null
      log.error({ err }, 'making webhook deliveries from the event log failed; trying again')
      later(1000)
    })
  }

  return {
    kick,
    start (opts: { backstop: boolean }): void {
      stopped = false
      kick()
      if (opts.backstop) {
        backstop = setInterval(kick, BACKSTOP_MS)
        backstop.unref()
      }
    },
    async stop (): Promise<void> {
      stopped = true
      if (backstop !== null) clearInterval(backstop)
      if (running !== null) await running
    }
  }
}
