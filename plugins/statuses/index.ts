import fp from 'fastify-plugin'
import { createCleanup } from './cleanup.js'
import { createStatusService } from './service.js'
import type { StatusDeps } from './deps.js'
import type { SendStatusService } from '../send-status/index.js'
import reportRoutes from './report-routes.js'
import routes from './routes.js'

/**
 * The status service as one decorator: reading and deleting (service), reports and expiry (cleanup), with
 * the posting of plugins/send-status handed through (`send`, `submit`, `recipientsOf`, `recover`, `drain`),
 * so that one decorator answers for a status from its send to its expiry. Viewers come in through
 * plugins/viewer-ingest, reactions and replies through plugins/interaction-ingest.
 */
export function createStatuses (deps: StatusDeps, posting: Omit<SendStatusService, 'start' | 'stop'>) {
  const service = createStatusService(deps)
  const expiry = createCleanup(deps, service.releaseMedia)

  return {
    send: posting.send,
    /** the send-status route: waits (200), or answers `sending` (202) and sends in the background */
    submit: posting.submit,
    /** whom a send-status body comes to now (pacing's look-ahead for scheduled runs, then passed to submit) */
    recipientsOf: posting.recipientsOf,
    /** resumes sends a crash left `sending` (in the background; each waits for its session) */
    recover: posting.recover,
    /** ends resumes still waiting for a session and waits for sends under way (bounded) */
    drain: posting.drain,
    list: service.list,
    viewers: service.viewers,
    reactions: service.reactions,
    replies: service.replies,
    remove: service.remove,
    /** removes a media file once no status and no schedule refers to it */
    releaseMedia: service.releaseMedia,
    cleanup: expiry.cleanup,
    startCleanupTimer: expiry.startTimer,
    /** Stops the cleanup timer. */
    stop (): void {
      expiry.stopTimer()
    }
  }
}

export type StatusService = ReturnType<typeof createStatuses>

declare module 'fastify' {
  interface FastifyInstance {
    statuses: StatusService
  }
}

export default fp(async (app) => {
  const service = createStatuses({
    stores: app.stores,
    config: app.config,
    platform: app.platform,
    mediaStore: app.mediaStore,
    events: app.domainEvents,
    log: app.log.child({ plugin: 'statuses' })
  }, app.sendStatus)
  app.decorate('statuses', service)
  app.addHook('onReady', async () => {
    try {
      await service.cleanup()
    } catch (err) {
      app.log.error({ err }, 'status cleanup at start failed')
    }
    service.startCleanupTimer()
  })
  // the sends under way end in plugins/send-status's onClose, which runs after this one (it registered first)
  app.addHook('onClose', async () => {
    service.stop()
  })
  await app.register(routes, { prefix: '/api' })
  await app.register(reportRoutes, { prefix: '/api' })
}, { name: 'statuses', dependencies: ['db', 'config', 'domain-events', 'platform', 'media-store', 'send-status', 'auth', 'cluster'] })
