import fp from 'fastify-plugin'
import socketIoModule from 'fastify-socket.io'
import type { FastifyPluginAsync } from 'fastify'
import type { Server, ServerOptions } from 'socket.io'
import { apiKeyFrom } from '../app/auth.js'

declare module 'fastify' {
  interface FastifyInstance {
    io: Server
  }
}

// fastify-socket.io is CommonJS with an `exports.default`; under Node's ESM loader the default import is the
// whole module object.
const socketIo = ((socketIoModule as unknown as { default?: FastifyPluginAsync<Partial<ServerOptions>> }).default ??
  socketIoModule) as FastifyPluginAsync<Partial<ServerOptions>>

/** A client that reconnects within this long gets the events it missed (socket.recovered is true). */
export const RECOVERY_WINDOW_MS = 2 * 60_000

export default fp(async (app) => {
  const origin = app.config.corsOrigin
  await app.register(socketIo, {
    path: '/socket.io/',
    serveClient: true,
    pingInterval: 25_000,
    pingTimeout: 20_000,
    // a recovered connection passes the key check again like any other handshake
    connectionStateRecovery: { maxDisconnectionDuration: RECOVERY_WINDOW_MS, skipMiddlewares: false },
    // long polling from another origin needs CORS like the API (WebSocket upgrades do not)
    ...(origin === null ? {} : { cors: { origin, methods: ['GET', 'POST'] } })
  })
  app.io.use((socket, next) => {
    const auth = socket.handshake.auth as { apiKey?: unknown, token?: unknown } | undefined
    const candidates = [auth?.apiKey, auth?.token, apiKeyFrom(socket.handshake.headers)]
    if (candidates.some((c) => typeof c === 'string' && app.checkApiKey(c))) { next(); return }
    next(new Error('Unauthorized'))
  })
}, { name: 'socket-io', dependencies: ['config', 'auth'] })
