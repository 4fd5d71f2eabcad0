import fp from 'fastify-plugin'
import type { PlatformEventMap } from '../../src/platform/types.js'
import { createCleanup } from './cleanup.js'
import { createStatusService } from './service.js'
import type { StatusDeps } from './deps.js'
import reportRoutes from './report-routes.js'
import routes from './routes.js'

export { VIEWERS_UPDATE_MS } from './viewer-ingest.js'

/**
 * The status service as one decorator: sending and reading (service) and expiry (cleanup). Viewers come
 * in through the viewer ingest (viewer-ingest.ts), the receipt sink the platform commits to.
 */
export function createStatuses (deps: StatusDeps) {
  const { platform, log } = deps
  const service = createStatusService(deps)
  const expiry = createCleanup(deps, service.releaseMedia)

  const onStatusError = (payload: PlatformEventMap['status-error']): void => {
    service.recordRejection(payload).catch((err: unknown) => { log.error({ err }, 'recording a status rejection failed') })
  }

  return {
    send: service.send,
    /** the send-status route: waits (200), or answers `sending` (202) and sends in the background */
    submit: service.submit,
    /** whom a send-status body comes to now (pacing's look-ahead for scheduled runs, then passed to submit) */
    recipientsOf: service.recipientsOf,
    /** resumes sends a crash left `sending` (in the background; each waits for its session) */
    recover: service.recover,
    /** ends resumes still waiting for a session and waits for sends under way (bounded) */
    drain: service.drain,
    list: service.list,
    viewers: service.viewers,
    reactions: service.reactions,
    replies: service.replies,
    remove: service.remove,
    /** removes a media file once no status and no schedule refers to it */
    releaseMedia: service.releaseMedia,
    cleanup: expiry.cleanup,
    start (): void {
      platform.on('status-error', onStatusError)
    },
    startCleanupTimer: expiry.startTimer,
    /** Stops timers; events arriving later are dropped. */
    stop (): void {
      expiry.stopTimer()
      platform.off('status-error', onStatusError)
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
    remoteMedia: app.remoteMedia,
    events: app.domainEvents,
    eventLog: app.eventLog,
    audiences: app.audiences,
    log: app.log.child({ plugin: 'statuses' }),
    metrics: app.metrics,
    admit: app.pacing.admit
  })
  app.decorate('statuses', service)
  service.start()
  app.addHook('onReady', async () => {
    try {
      await service.cleanup()
    } catch (err) {
      app.log.error({ err }, 'status cleanup at start failed')
    }
    service.startCleanupTimer()
    // interrupted sends resume with their sessions: the session supervisor asks (plugins/session-supervisor)
  })
  // sends under way end (partial, once the platform closed their session) before the database closes
  app.addHook('onClose', async () => {
    await service.drain(10_000)
    service.stop()
  })
  await app.register(routes, { prefix: '/api' })
  await app.register(reportRoutes, { prefix: '/api' })
}, { name: 'statuses', dependencies: ['db', 'config', 'domain-events', 'platform', 'media-store', 'remote-media', 'audiences', 'metrics', 'pacing', 'auth', 'cluster'] })
