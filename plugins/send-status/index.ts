import fp from 'fastify-plugin'
import type { PlatformEventMap } from '../../src/platform/types.js'
import { createSendStatusService } from './service.js'
import type { SendStatusDeps } from './deps.js'
import routes from './routes.js'

/**
 * Posting statuses as one decorator: the send-status route's submit, sends resumed after a crash, and the
 * rejections the platform reports after a status went out. The recorded statuses are read, deleted and
 * expired by plugins/statuses; their viewers come in through plugins/viewer-ingest.
 */
export function createSendStatus (deps: SendStatusDeps) {
  const { platform, log } = deps
  const service = createSendStatusService(deps)

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
    start (): void {
      platform.on('status-error', onStatusError)
    },
    /** events arriving later are dropped */
    stop (): void {
      platform.off('status-error', onStatusError)
    }
  }
}

export type SendStatusService = ReturnType<typeof createSendStatus>

declare module 'fastify' {
  interface FastifyInstance {
    sendStatus: SendStatusService
  }
}

export default fp(async (app) => {
  const service = createSendStatus({
    stores: app.stores,
    config: app.config,
    platform: app.platform,
    mediaStore: app.mediaStore,
    remoteMedia: app.remoteMedia,
    events: app.domainEvents,
    eventLog: app.eventLog,
    audiences: app.audiences,
    log: app.log.child({ plugin: 'statuses' }),
    admit: app.pacing.admit
  })
  app.decorate('sendStatus', service)
  service.start()
  // interrupted sends resume with their sessions: the session supervisor asks (plugins/session-supervisor)
  // sends under way end (partial, once the platform closed their session) before the database closes
  app.addHook('onClose', async () => {
    await service.drain(10_000)
    service.stop()
  })
  await app.register(routes, { prefix: '/api' })
}, { name: 'send-status', dependencies: ['db', 'config', 'domain-events', 'platform', 'media-store', 'remote-media', 'audiences', 'pacing', 'auth', 'cluster'] })
