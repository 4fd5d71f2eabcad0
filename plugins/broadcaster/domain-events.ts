import { EventEmitter } from 'node:events'
import fp from 'fastify-plugin'
import type { FastifyBaseLogger } from 'fastify'
import type { EventPayloads } from '../../schemas/events.js'

/** What the services announce; the broadcaster forwards each one to socket.io under the same name. */
export type DomainEventMap = Pick<EventPayloads,
  'session-created' | 'session-deleted' | 'status-sent' | 'status-send-progress' | 'status-viewers-update' | 'status-viewers-added' | 'status-reaction' | 'status-reply' | 'status-deleted' | 'statuses-updated' |
  'scheduled-status-fired' | 'scheduled-status-failed'>
export type DomainEventName = keyof DomainEventMap

export const DOMAIN_EVENT_NAMES: readonly DomainEventName[] = [
  'session-created', 'session-deleted', 'status-sent', 'status-send-progress', 'status-viewers-update', 'status-viewers-added', 'status-reaction', 'status-reply', 'status-deleted', 'statuses-updated',
  'scheduled-status-fired', 'scheduled-status-failed'
]

type Listener<K extends DomainEventName> = (payload: DomainEventMap[K]) => void

/** A synchronous typed event bus; a listener that throws is logged and cannot break the service that emitted. */
export function createDomainEvents (log: FastifyBaseLogger) {
  const ee = new EventEmitter()
  ee.setMaxListeners(0)
  return {
    emit<K extends DomainEventName> (event: K, payload: DomainEventMap[K]): void {
      for (const listener of ee.listeners(event) as Array<Listener<K>>) {
        try {
          listener(payload)
        } catch (err) {
          log.error({ err, event }, 'domain event listener threw')
        }
      }
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
  }
}

export default fp(async (app) => {
  app.decorate('domainEvents', createDomainEvents(app.log))
}, { name: 'domain-events' })
