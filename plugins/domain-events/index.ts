import { EventEmitter } from 'node:events'
import fp from 'fastify-plugin'
import type { FastifyBaseLogger } from 'fastify'
import type { Transactors } from '../../src/db/stores/transaction.js'
import type { EventPayloads } from '../../schemas/events.js'
import { createEventLog, type Emit, type EventLog } from '../events/log.js'

/** What the services announce; each goes through the event log, then to socket.io and webhooks. */
export type DomainEventMap = Pick<EventPayloads,
  'session-created' | 'session-deleted' | 'status-sent' | 'status-send-progress' | 'status-viewers-update' | 'status-viewers-added' | 'status-reaction' | 'status-reply' | 'status-deleted' | 'statuses-updated' |
  'contact-status' | 'contact-status-mention' | 'scheduled-status-fired' | 'scheduled-status-failed'>
export type DomainEventName = keyof DomainEventMap

export const DOMAIN_EVENT_NAMES: readonly DomainEventName[] = [
  'session-created', 'session-deleted', 'status-sent', 'status-send-progress', 'status-viewers-update', 'status-viewers-added', 'status-reaction', 'status-reply', 'status-deleted', 'statuses-updated',
  'contact-status', 'contact-status-mention', 'scheduled-status-fired', 'scheduled-status-failed'
]
const DOMAIN = new Set<string>(DOMAIN_EVENT_NAMES)

type Listener<K extends DomainEventName> = (payload: DomainEventMap[K]) => void

/**
 * The services' typed events, durable: `within` runs a change and appends its events in the same
 * transaction; `emit` appends one on its own (for what is not a database change of its own). Hot paths
 * append in their own commits (receipts, send progress: eventLog.committed). Listeners hear each event
 * once it is committed, in log order (before `within` resolves), with the payload as
 * emitted. A listener that throws is logged.
 */
export function createDomainEvents (log: FastifyBaseLogger, eventLog: EventLog) {
  const ee = new EventEmitter()
  ee.setMaxListeners(0)
  eventLog.onEvent((entry) => {
    if (!DOMAIN.has(entry.type)) return
    for (const listener of ee.listeners(entry.type) as Array<(payload: unknown) => void>) {
      try {
        listener(entry.data)
      } catch (err) {
        log.error({ err, event: entry.type }, 'domain event listener threw')
      }
    }
  })
  return {
    /** appends the event in a transaction of its own; an event that cannot be written is logged (and lost) */
    emit<K extends DomainEventName> (event: K, payload: DomainEventMap[K]): void {
      eventLog.append<K>(event, payload as EventPayloads[K]).catch((err: unknown) => { log.error({ err, event }, 'writing an event to the event log failed') })
    },
    /** runs the change and appends the events it emits in one transaction */
    async within<T> (work: (tx: Transactors, emit: Emit) => Promise<T>): Promise<T> {
      return await eventLog.within(work)
    },
    on<K extends DomainEventName> (event: K, listener: Listener<K>): void {
      ee.on(event, listener)
    },
    off<K extends DomainEventName> (event: K, listener: Listener<K>): void {
      ee.off(event, listener)
    }
  }
}

export type DomainEvents = ReturnType<typeof createDomainEvents>

declare module 'fastify' {
  interface FastifyInstance {
    /** the services' typed domain events */
    domainEvents: DomainEvents
    /** the event log every event reporting a change goes through (docs/events-log.md) */
    eventLog: EventLog
  }
}

export default fp(async (app) => {
  const eventLog = createEventLog({
    store: app.stores.events,
    transaction: app.stores.transaction,
    log: app.log.child({ plugin: 'event-log' }),
    retentionMs: app.config.eventsRetentionMs,
    pruneIntervalMs: app.config.cleanupIntervalMs
  })
  await eventLog.start()
  app.decorate('eventLog', eventLog)
  app.decorate('domainEvents', createDomainEvents(app.log, eventLog))
  app.addHook('onClose', async () => { await eventLog.stop() })
}, { name: 'domain-events', dependencies: ['config', 'db'] })
