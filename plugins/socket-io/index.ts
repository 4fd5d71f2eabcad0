import fp from 'fastify-plugin'
import socketIoModule from 'fastify-socket.io'
import type { FastifyBaseLogger, FastifyPluginAsync } from 'fastify'
import type { Server, ServerOptions } from 'socket.io'

declare module 'fastify' {
  interface FastifyInstance {
    io: Server
  }
}

// fastify-socket.io is CommonJS with an `exports.default`; under Node's ESM loader the default import is the
// whole module object.
// Its options are socket.io's, plus preClose (replaces the plugin's own).
type SocketIoOptions = Partial<ServerOptions> & { preClose?: (done: () => void) => void }
const socketIo = ((socketIoModule as unknown as { default?: FastifyPluginAsync<SocketIoOptions> }).default ??
  socketIoModule) as FastifyPluginAsync<SocketIoOptions>

/** A client that reconnects within this long gets the events it missed (socket.recovered is true). */
export const RECOVERY_WINDOW_MS = 2 * 60_000

/**
 * With REDIS_URL, the Redis adapter: an event emitted on one node reaches the clients of every node in its
 * rooms (each node emits its own sessions' events; rooms and subscriptions: plugins/broadcaster/subscriptions.ts).
 * Connection state recovery is in-memory only then: a client that
 * reconnects gets a fresh connection rather than the events it missed (the adapter does not keep them).
 */
async function redisAdapter (url: string, log: FastifyBaseLogger): Promise<{ adapter: ServerOptions['adapter'], close: () => Promise<void> }> {
  // loaded here, not at the top: a node without REDIS_URL (the default) never needs them, and they cost
  // ~0.2 CPU s of every start (ioredis and the adapter measured alone on this project's machines)
  const [{ createAdapter }, { Redis }] = await Promise.all([import('@socket.io/redis-adapter'), import('ioredis')])
  const pub = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 })
  const sub = pub.duplicate()
  for (const client of [pub, sub]) {
    client.on('error', (err: Error) => { log.warn({ err: { message: err.message } }, 'redis connection error') })
    // The adapter fires these without awaiting them: while Redis is away each one would reject unhandled
    // and end the process. Events emitted then do not reach the other nodes' clients; this node goes on.
    for (const method of ['publish', 'subscribe', 'psubscribe', 'unsubscribe', 'punsubscribe'] as const) {
      const original = (client[method] as (...args: unknown[]) => Promise<unknown>).bind(client)
      Object.assign(client, {
        [method]: (...args: unknown[]) => {
          const result = original(...args)
          result.catch((err: unknown) => { log.warn({ err: { message: err instanceof Error ? err.message : String(err) }, command: method }, 'redis command failed') })
          return result
        }
      })
    }
  }
  try {
    await Promise.all([pub.connect(), sub.connect()])
  } catch (err) {
    pub.disconnect()
    sub.disconnect()
    throw new Error(`Could not connect to Redis (REDIS_URL): ${err instanceof Error ? err.message : String(err)}`)
  }
  return {
    adapter: createAdapter(pub, sub) as ServerOptions['adapter'],
    close: async () => { await Promise.allSettled([pub.quit(), sub.quit()]) }
  }
}

export default fp(async (app) => {
  const origin = app.config.corsOrigin
  const redis = app.config.redisUrl === null ? null : await redisAdapter(app.config.redisUrl, app.log)
  if (redis !== null) {
    // registered before socket.io's own onClose, so it runs after it: the server is closed before its adapter's clients
    app.addHook('onClose', async () => { await redis.close() })
  }
  await app.register(socketIo, {
    ...(redis !== null ? { adapter: redis.adapter } : {}),
    path: '/socket.io/',
    serveClient: true,
    pingInterval: 25_000,
    pingTimeout: 20_000,
    // a recovered connection passes the key check again like any other handshake
    connectionStateRecovery: { maxDisconnectionDuration: RECOVERY_WINDOW_MS, skipMiddlewares: false },
    // On close, the plugin's default only disconnects the sockets joined to a namespace. A client between its
    // engine.io handshake and its namespace connect (the key check is async), or one whose connect the key check
    // refused, holds an open connection too, answering pings: the HTTP server's close would wait for it forever.
    // Closing every engine.io client as well lets the close finish at once.
    preClose: (done: () => void) => {
      app.io.local.disconnectSockets(true)
      app.io.engine.close()
      done()
    },
    // long polling from another origin needs CORS like the API (WebSocket upgrades do not)
    ...(origin === null ? {} : { cors: { origin, methods: ['GET', 'POST'] } })
  })
}, { name: 'socket-io', dependencies: ['config'] })
