import type { Server } from 'socket.io'

// socket.io rooms: one per session, and one for the clients that hear every session. An event goes to its
// session's room and to that one (socket.io sends it once to a client in both); the Redis adapter carries
// rooms across nodes. Who joins which room: plugins/broadcaster/subscriptions.ts.

/** clients that hear every session: the admin key or a `"*"` key, not subscribed to chosen sessions */
export const ROOM_ALL = '@all'

export function sessionRoom (sessionId: string): string {
  return `session:${sessionId}`
}

type Audience = ReturnType<Server['to']>

/**
 * The clients that listen to a session, from `io` or from a narrower operator (`io.local`, `io.except(…)`),
 * to emit on: `sessionAudience(app.io.local, id).except(room).emit(event, payload)`.
 */
export function sessionAudience (target: Pick<Server, 'to'> | Pick<Audience, 'to'>, sessionId: string): Audience {
  return (target as Pick<Audience, 'to'>).to([ROOM_ALL, sessionRoom(sessionId)])
}

/** Sends an event to the clients that listen to its session. */
export function emitToSession (io: Server, event: string, payload: { sessionId: string }): void {
  sessionAudience(io, payload.sessionId).emit(event, payload)
}
