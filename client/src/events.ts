import { io, type ManagerOptions, type Socket, type SocketOptions } from 'socket.io-client'
import type { components } from './generated/openapi.js'

// The service's socket.io events, typed from its OpenAPI document: every event's payload is a component
// `Event<Name>` there (made from schemas/events.ts), so `status-viewers-added` is `EventStatusViewersAdded`.
// Needs socket.io-client (a peer dependency: install it beside this package); the REST client does not.

type Schemas = components['schemas']
type EventSchemaName = Extract<keyof Schemas, `Event${string}`>

/** `StatusViewersAdded` → `-status-viewers-added` */
type Kebab<S extends string> = S extends `${infer C}${infer Rest}` ? `${C extends Lowercase<C> ? C : `-${Lowercase<C>}`}${Kebab<Rest>}` : ''
type NameOf<K> = K extends `Event${infer Pascal}` ? (Kebab<Pascal> extends `-${infer Name}` ? Name : never) : never

/** every event the service emits: `connection-status`, `status-sent`, `status-viewers-added`, … */
export type EventName = NameOf<EventSchemaName>

/**
 * An event's payload as documented, plus `eventId` on every logged event (all but the QR and pairing
 * codes): pass the last one you handled as `after` to catch up (docs/events-log.md).
 */
export type EventPayload<E extends EventName> = { [K in EventSchemaName as NameOf<K>]: Schemas[K] }[E] & { eventId?: number }

export type ServerEvents = { [E in EventName]: (payload: EventPayload<E>) => void }

/** The acknowledgement of `subscribe` / `unsubscribe` (docs/keys.md): the API's envelope. */
export type SubscriptionAck = { success: true, data: { sessionIds: string[] | '*' } } | { success: false, error: string }
export interface ClientEvents {
  subscribe: (arg: { sessionIds: string[] | '*' }, ack: (answer: SubscriptionAck) => void) => void
  unsubscribe: (arg: { sessionIds: string[] | '*' }, ack: (answer: SubscriptionAck) => void) => void
}

export type EventSocket = Socket<ServerEvents, ClientEvents>

export interface EventsOptions {
  /** where the service listens, e.g. `http://localhost:3000` */
  baseUrl: string
  /** the admin key (API_KEY) or a scoped key: a scoped key hears only its sessions */
  apiKey: string
  /** only these sessions' events (default: every session the key sees); `subscribe` changes it later */
  sessionIds?: string[]
  /** first receive every logged event after this eventId, then live events (docs/events-log.md) */
  after?: number
  /** more socket.io-client options (transports, reconnection, timeouts) */
  socket?: Partial<ManagerOptions & SocketOptions>
}

/**
 * Connects to the service's socket.io endpoint (`/socket.io/`) with the key. On a reconnect the socket asks
 * for what it missed: it passes the highest eventId it has received as `after`, so no logged event is lost
 * across a dropped connection.
 */
export function connectEvents (options: EventsOptions): EventSocket {
  let after = options.after
  const socket: EventSocket = io(options.baseUrl, {
    path: '/socket.io/',
    transports: ['websocket'],
    ...options.socket,
    auth: (cb) => {
      cb({ apiKey: options.apiKey, ...(options.sessionIds !== undefined ? { sessionIds: options.sessionIds } : {}), ...(after !== undefined ? { after } : {}) })
    }
  })
  socket.onAny((_event: string, payload: unknown) => {
    const id = (payload as { eventId?: unknown } | null)?.eventId
    if (typeof id === 'number' && (after === undefined || id > after)) after = id
  })
  return socket
}
