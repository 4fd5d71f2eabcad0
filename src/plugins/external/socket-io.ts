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

export default fp(async (app) => {
  await app.register(socketIo, { path: '/socket.io/', serveClient: true, pingInterval: 25_000, pingTimeout: 20_000 })
  app.io.use((socket, next) => {
    const auth = socket.handshake.auth as { apiKey?: unknown, token?: unknown } | undefined
    const candidates = [auth?.apiKey, auth?.token, apiKeyFrom(socket.handshake.headers)]
    if (candidates.some((c) => typeof c === 'string' && app.checkApiKey(c))) { next(); return }
    next(new Error('Unauthorized'))
  })
}, { name: 'socket-io', dependencies: ['auth'] })
