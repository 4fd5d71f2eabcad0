import fp from 'fastify-plugin'
import { sessionLinksFor } from '../../db/repositories/session-links.js'
import { createPlatform, type Platform } from '../../platform/platform.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** every session's platform connection; the only code that talks to Baileys */
    platform: Platform
  }
}

export default fp(async (app) => {
  const platform = createPlatform({
    db: app.db,
    links: sessionLinksFor(app.db),
    receiptSink: app.viewerIngest.sink,
    interactionSink: app.interactionIngest.sink,
    wa: app.config.wa,
    logger: app.log,
    timing: { sendOpenWaitMs: app.config.sendReconnectWaitMs }
  })
  app.decorate('platform', platform)
  // sessions reconnect once the app is ready, not while plugins are still registering; with several
  // nodes each starts only the sessions it owns (the cluster plugin)
  app.addHook('onReady', async () => {
    if (!app.config.cluster.enabled) await platform.restoreAll()
  })
  // preClose: sockets end before the database plugin closes the connection their writes need
  app.addHook('preClose', async () => {
    await platform.close()
  })
}, { name: 'platform', dependencies: ['config', 'db', 'viewer-ingest', 'interaction-ingest'] })
