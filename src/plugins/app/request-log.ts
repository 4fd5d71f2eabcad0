import fp from 'fastify-plugin'

/**
 * One log line when a request comes in and one when its answer is sent, with its `reqId`, at debug.
 * Fastify's own pair (at info) is turned off (`disableRequestLogging` in app.ts); below debug these hooks
 * are not even added, so a request costs no log work at the default level.
 */
export default fp(async (app) => {
  const { levels } = app.log as unknown as { levels?: { values: Record<string, number> } }
  const debug = levels?.values.debug ?? 20
  if ((levels?.values[app.log.level] ?? Infinity) > debug) return
  app.addHook('onRequest', (req, _reply, done) => {
    req.log.debug({ req }, 'incoming request')
    done()
  })
  app.addHook('onResponse', (req, reply, done) => {
    req.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed')
    done()
  })
}, { name: 'request-log' })
