import fp from 'fastify-plugin'
import { createScheduleService } from './service.js'
import { createScheduler } from './scheduler.js'

export type Schedules = ReturnType<typeof createScheduleService> & { tick: () => Promise<void> }

declare module 'fastify' {
  interface FastifyInstance {
    /** scheduled statuses: their API (service.ts) and the runs (scheduler.ts) */
    schedules: Schedules
  }
}

export default fp(async (app) => {
  const log = app.log.child({ plugin: 'schedules' })
  const service = createScheduleService({ db: app.db, stores: app.stores, config: app.config, releaseMedia: app.statuses.releaseMedia, log })
  const scheduler = createScheduler({
    db: app.db,
    stores: app.stores,
    config: app.config,
    platform: app.platform,
    statuses: app.statuses,
    events: app.domainEvents,
    log,
    ...(app.hasDecorator('pacing') ? { pacing: app.pacing } : {})
  })
  app.decorate('schedules', { ...service, tick: scheduler.tick })
  // after the statuses' onReady (registered earlier): interrupted sends are being resumed by now
  app.addHook('onReady', async () => { await scheduler.start() })
  // before the statuses drain their sends (onClose runs in reverse order)
  app.addHook('onClose', async () => { await scheduler.stop() })
}, { name: 'schedules', dependencies: ['db', 'config', 'platform', 'statuses', 'domain-events'] })
