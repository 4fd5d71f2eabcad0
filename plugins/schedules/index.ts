import fp from 'fastify-plugin'
import { createScheduleService } from './service.js'
import { createScheduler } from './scheduler.js'
import routes from './routes.js'

export type Schedules = ReturnType<typeof createScheduleService> & { tick: () => Promise<void> }

declare module 'fastify' {
  interface FastifyInstance {
    /** scheduled statuses: their API (service.ts) and the runs (scheduler.ts) */
    schedules: Schedules
  }
}

export default fp(async (app) => {
  const log = app.log.child({ plugin: 'schedules' })
  const sessionExists = async (sessionId: string): Promise<boolean> => await app.stores.sessions.find(sessionId) !== undefined
  const uploadExists = async (filename: string): Promise<boolean> => await app.stores.uploads.find(filename) !== undefined
  const { schedules, audiences } = app.stores
  const service = createScheduleService({ schedules, audiences, sessionExists, uploadExists, config: app.config, releaseMedia: app.statuses.releaseMedia, log })
  const scheduler = createScheduler({
    schedules,
    config: app.config,
    platform: app.platform,
    statuses: app.statuses,
    events: app.domainEvents,
    log,
    pacing: app.pacing
  })
  app.decorate('schedules', { ...service, tick: scheduler.tick })
  // after the statuses' onReady (a plugin's hooks run after those of the plugins it depends on): interrupted
  // sends are being resumed by now
  app.addHook('onReady', async () => { await scheduler.start() })
  // before the statuses drain their sends (a plugin closes before the plugins it depends on)
  app.addHook('onClose', async () => { await scheduler.stop() })
  await app.register(routes, { prefix: '/api' })
}, { name: 'schedules', dependencies: ['db', 'config', 'platform', 'statuses', 'domain-events', 'pacing', 'audiences'] })
