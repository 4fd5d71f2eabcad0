import type { FastifyInstance } from 'fastify'
import type { Socket } from 'socket.io'
import { SESSION_ID_PATTERN } from '../../schemas/common.js'
import { ROOM_ALL, sessionRoom } from './rooms.js'
import { apiKeyFrom } from '../auth/index.js'
import { canSee, type Principal } from '../keys/store.js'

// Which sessions a socket.io client hears. By default every session its key may see; or the sessions it
// names in the handshake (`auth.sessionIds`) or with `subscribe` / `unsubscribe` messages (acknowledged).
// Rooms (broadcaster/rooms.ts) do the filtering on the server: a client never receives another session's events.

/** every socket of a scoped key: closed when the key is revoked */
export const keyRoom = (keyId: string): string => `@key:${keyId}`
/** sockets of a key with a session list that hear all of it: they join the sessions the key creates */
const keyDefaultRoom = (keyId: string): string => `@key-default:${keyId}`
/** sockets of keys with a session list: a new session's room is emptied of them before anyone hears of it */
const ROOM_LISTED = '@listed'

/** '*': every session the key may see; else the chosen ones */
export type Subscription = '*' | string[]

export interface SocketData {
  principal: Principal
  subscription: Subscription
  /** the sessions the socket hears (null: every session), kept in step with its rooms, for readers of socket.data (event catch-up) */
  sessionIds: readonly string[] | null
}

/** What a socket with this key and subscription hears; null: every session. */
export function heardSessions (p: Principal, subscription: Subscription): readonly string[] | null {
  if (subscription !== '*') return subscription
  return p.sessions === '*' ? null : [...p.sessions]
}

const SESSION_ID = new RegExp(SESSION_ID_PATTERN)

/** The sessions a client asked for, checked against its key; an error message naming the problem otherwise. */
export function parseSubscription (value: unknown, p: Principal, field: string): { ok: Subscription } | { error: string } {
  if (value === undefined || value === '*') return { ok: '*' }
  if (!Array.isArray(value) || value.length > 1000 || !value.every((v) => typeof v === 'string' && SESSION_ID.test(v))) {
    return { error: `${field} must be "*" or an array of session ids` }
  }
  const unknown = (value as string[]).find((id) => !canSee(p, id))
  // a session the key may not see is unknown to it, as on REST (404, not 403)
  if (unknown !== undefined) return { error: `Session not found: ${unknown}` }
  return { ok: [...new Set(value as string[])] }
}

/** Puts the socket in exactly the rooms its key and subscription call for. */
export function applyRooms (socket: Socket): void {
  const data = socket.data as SocketData
  const { principal: p, subscription } = data
  data.sessionIds = heardSessions(p, subscription)
  const want = new Set<string>([socket.id])
  if (p.id !== null) want.add(keyRoom(p.id))
  if (p.sessions !== '*') want.add(ROOM_LISTED)
  if (subscription !== '*') {
    for (const id of subscription) want.add(sessionRoom(id))
  } else if (p.sessions === '*') {
    want.add(ROOM_ALL)
  } else {
    if (p.id !== null) want.add(keyDefaultRoom(p.id))
    for (const id of p.sessions) want.add(sessionRoom(id))
  }
  for (const room of [...socket.rooms]) if (!want.has(room)) void socket.leave(room)
  void socket.join([...want])
}

type Ack = (answer: { success: true, data: { sessionIds: Subscription } } | { success: false, error: string }) => void

/** `subscribe` / `unsubscribe` for one socket. */
export function handleSubscriptions (app: FastifyInstance, socket: Socket): void {
  const data = socket.data as SocketData
  const current = (): Principal | undefined => app.keys.current(data.principal)

  const answer = (ack: unknown, result: { ok: Subscription } | { error: string }): void => {
    if (typeof ack !== 'function') return
    ;(ack as Ack)('error' in result ? { success: false, error: result.error } : { success: true, data: { sessionIds: result.ok } })
  }
  const idsOf = (arg: unknown): unknown => Array.isArray(arg) || arg === '*' ? arg : (arg as { sessionIds?: unknown } | null)?.sessionIds

  socket.on('subscribe', (arg: unknown, ack: unknown) => {
    const p = current()
    if (p === undefined) { socket.disconnect(true); return }
    const parsed = parseSubscription(idsOf(arg) ?? null, p, 'sessionIds')
    if ('error' in parsed) { answer(ack, parsed); return }
    const asked = parsed.ok
    // naming sessions narrows a client that heard everything to those; "*" widens it again
    data.principal = p
    data.subscription = asked === '*' || data.subscription === '*' ? asked : [...new Set([...data.subscription, ...asked])]
    applyRooms(socket)
    answer(ack, { ok: data.subscription })
  })

  socket.on('unsubscribe', (arg: unknown, ack: unknown) => {
    const p = current()
    if (p === undefined) { socket.disconnect(true); return }
    const parsed = parseSubscription(idsOf(arg) ?? null, p, 'sessionIds')
    if ('error' in parsed) { answer(ack, parsed); return }
    const asked = parsed.ok
    if (asked === '*') { data.subscription = []; applyRooms(socket); answer(ack, { ok: data.subscription }); return }
    // from "everything": the sessions the key sees now, but these
    const from = data.subscription !== '*'
      ? Promise.resolve(data.subscription)
      : p.sessions !== '*' ? Promise.resolve([...p.sessions]) : app.stores.sessions.list().then((rows) => rows.map((r) => r.id))
    from.then((ids) => {
      data.principal = p
      data.subscription = ids.filter((id) => !asked.includes(id))
      applyRooms(socket)
      answer(ack, { ok: data.subscription })
    }, (err: unknown) => {
      app.log.error({ err }, 'unsubscribe failed')
      answer(ack, { error: 'Internal server error' })
    })
  })
}

/** Keeps rooms in step with the keys: a revoked key's sockets close, a new session reaches its creator's sockets only. */
export function followKeys (app: FastifyInstance): void {
  app.keys.on('revoked', (keyId) => { app.io.in(keyRoom(keyId)).disconnectSockets(true) })
  app.keys.on('sessionCreated', (sessionId, keyId) => {
    const room = sessionRoom(sessionId)
    // a listed key's socket left in this room by an earlier session of the same id must not hear the new one
    app.io.in(ROOM_LISTED).socketsLeave(room)
    if (keyId !== null) app.io.in(keyDefaultRoom(keyId)).socketsJoin(room)
  })
}

/**
 * Who may connect: the same look-up as the REST API (keys/store.ts), the admin key or a scoped key, then the
 * sessions the client asks for (auth.sessionIds; default: every session its key may see); then the rooms.
 */
export function admitSockets (app: FastifyInstance): void {
  app.io.use((socket, next) => {
    const auth = socket.handshake.auth as { apiKey?: unknown, token?: unknown, sessionIds?: unknown } | undefined
    const candidates = [auth?.apiKey, auth?.token, apiKeyFrom(socket.handshake.headers)].filter((c): c is string => typeof c === 'string' && c !== '')
    resolveFirst(app, candidates).then((principal) => {
      if (principal === null) { next(new Error('Unauthorized')); return }
      // a recovered connection keeps what it had subscribed to, within what its key sees now
      const kept = socket.recovered ? (socket.data as Partial<SocketData>).subscription : undefined
      const previous = Array.isArray(kept) ? kept.filter((id) => canSee(principal, id)) : kept
      const parsed = parseSubscription(previous ?? auth?.sessionIds, principal, 'auth.sessionIds')
      if ('error' in parsed) { next(new Error(parsed.error)); return }
      socket.data = { principal, subscription: parsed.ok, sessionIds: heardSessions(principal, parsed.ok) } satisfies SocketData
      next()
    }, (err: unknown) => { app.log.error({ err }, 'socket.io key look-up failed'); next(new Error('Internal server error')) })
  })
  app.io.on('connection', (socket) => {
    applyRooms(socket)
    handleSubscriptions(app, socket)
  })
  followKeys(app)
}

async function resolveFirst (app: FastifyInstance, candidates: string[]): Promise<Principal | null> {
  for (const c of candidates) {
    const p = await app.keys.resolve(c)
    if (p !== null) return p
  }
  return null
}
