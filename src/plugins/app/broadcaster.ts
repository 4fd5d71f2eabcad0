import fp from 'fastify-plugin'
import type { EventName, EventPayloads } from '../../schemas/events.js'

function createBroadcaster (emitToAll: (event: string, payload: unknown) => void) {
  return {
    /** The one place that emits socket.io events; every client receives every session's events. */
    emit<K extends EventName>(event: K, payload: EventPayloads[K]): void {
      emitToAll(event, payload)
    }
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    broadcaster: ReturnType<typeof createBroadcaster>
  }
}

export default fp(async (app) => {
  app.decorate('broadcaster', createBroadcaster((event, payload) => app.io.emit(event, payload)))
}, { name: 'broadcaster', dependencies: ['socket-io'] })
