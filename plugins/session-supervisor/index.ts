import fp from 'fastify-plugin'
import type { SessionHolder } from '../cluster/index.js'

/**
 * Start-up restore and send recovery, the same on one node and on many. The cluster plugin says which sessions
 * are this node's (every stored one on a single node, the leased ones in a cluster, as leases come and go);
 * this plugin opens them on the platform and resumes the sends a crash left `sending`. The platform and the
 * statuses service only do what they are asked, for the sessions they are given.
 */
export default fp(async (app) => {
  const { platform, statuses, cluster } = app
  const log = app.log.child({ plugin: 'session-supervisor' })

  const supervisor: SessionHolder = {
    async openAll () {
      // the platform loads and the stored sessions reconnect, a few at a time, after the ready hooks (under
      // `listen`, once the server listens: `listen` goes on right after them)
      setImmediate(() => {
        platform.restoreAll().catch((err: unknown) => { log.error({ err }, 'could not start the platform') })
      })
      try {
        await statuses.recover()
      } catch (err) {
        log.error({ err }, 'could not look for interrupted sends')
      }
    },
    async open (sessionId) {
      const row = await app.stores.sessions.find(sessionId)
      if (row === undefined) return
      await platform.startSession({ sessionId, authMethod: row.auth_method, phoneNumber: row.phone_number })
      // sends a crash (of this node or of the session's previous owner) left `sending` go on here
      await statuses.recover([sessionId])
    },
    async release (sessionId) {
      await platform.releaseSession(sessionId)
    },
    movable (sessionId) {
      return platform.snapshot(sessionId)?.connected === true
    }
  }

  // after the statuses' own ready hook (its start-up cleanup): the plugins this one depends on are ready first
  app.addHook('onReady', async () => {
    await cluster.serve(supervisor)
  })
}, { name: 'session-supervisor', dependencies: ['db', 'platform', 'statuses', 'cluster'] })
