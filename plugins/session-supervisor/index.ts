import fp from 'fastify-plugin'
import type { SessionHolder } from '../cluster/index.js'
import { createPacer, type PacerProgress } from './pacer.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** which of this node's sessions wait for their turn to connect, and which are connecting (GET /api/stats) */
    supervisor: { progress: (only?: ReadonlySet<string>) => PacerProgress & { concurrency: number } }
  }
}

/**
 * Beyond Baileys' own connect timeout (20 s): a handshake Baileys still waits for keeps its place, only a
 * session stuck some other way gives it up.
 */
export const START_SETTLE_MS = 30_000

/**
 * A start of more than a few sessions lets the API breathe between handshakes (pacer.ts, LoopBrake). With
 * 1,000 stored sessions on two cores, `GET /api/stats` p99 during the start went from 85–107 to 40–58 ms and
 * health's from 61–67 to 22–28 ms; all open after 31–39 s instead of 20–21 (bench/NOTES.md, "The start's
 * brake").
 */
export const START_BRAKE = { from: 16, windowMs: 25, busiest: 0.4, maxMs: 500 }

/**
 * Start-up restore and send recovery, the same on one node and on many. The cluster plugin says which sessions
 * are this node's (every stored one on a single node, the leased ones in a cluster, as leases come and go);
 * this plugin opens them on the platform, paced (pacer.ts: SESSION_START_CONCURRENCY handshakes at once), and
 * resumes the sends a crash left `sending`. The platform and the statuses service only do what they are asked,
 * for the sessions they are given.
 */
export default fp(async (app) => {
  const { platform, statuses, cluster } = app
  const { concurrency, takeoverConcurrency, jitterMs } = app.config.sessionStart
  const log = app.log.child({ plugin: 'session-supervisor' })

  /** opens one session this node holds; `recover`: then resumes its interrupted sends */
  const openHeld = async (sessionId: string, recover: boolean): Promise<void> => {
    try {
      // read when its turn comes: a session deleted meanwhile is not opened
      const row = await app.stores.sessions.find(sessionId)
      if (row !== undefined) await platform.startSession({ sessionId, authMethod: row.authMethod, phoneNumber: row.phoneNumber })
    } finally {
      // sends a crash (of this node or of the session's previous owner) left `sending` go on here
      if (recover) await statuses.recover([sessionId])
    }
  }

  /** sessions whose lease this node took: their interrupted sends are looked for once they open */
  const leased = new Set<string>()
  const pacer = createPacer({
    concurrency,
    jitterMs,
    settleMs: START_SETTLE_MS,
    start: async (sessionId) => { await openHeld(sessionId, leased.delete(sessionId)) },
    settled: async (sessionId, timeoutMs) => { await platform.settled(sessionId, timeoutMs) },
    onError: (err, sessionId) => { log.error({ err, sessionId }, 'could not open a session') },
    brake: START_BRAKE
  })

  const supervisor: SessionHolder = {
    async openAll () {
      // the sessions stored when the service becomes ready are the ones restored: read before `ready` resolves,
      // so one created meanwhile (through the API, or a row a test writes) is never also opened by the restore
      const ids = (await app.stores.sessions.stored()).map((s) => s.id)
      // the platform loads and the stored sessions reconnect, paced, after the ready hooks (under `listen`, once
      // the server listens: `listen` goes on right after them)
      setImmediate(() => {
        void (async () => {
          // loaded even with nothing to open: /api/health reports the platform's compatibility once it is
          await platform.preload()
          if (ids.length === 0) return
          const started = performance.now()
          log.info({ sessions: ids.length, concurrency }, 'opening the stored sessions')
          pacer.add(ids)
          await pacer.idle()
          log.info({ sessions: ids.length, ms: Math.round(performance.now() - started) }, 'stored sessions opened')
        })().catch((err: unknown) => { log.error({ err }, 'could not open the stored sessions') })
      })
      try {
        // every session's, once, before they reconnect (each resume waits for its session)
        await statuses.recover()
      } catch (err) {
        log.error({ err }, 'could not look for interrupted sends')
      }
    },
    async open (sessionId) {
      const row = await app.stores.sessions.find(sessionId)
      if (row === undefined) return
      // a session waiting for its link has no account to log in (a user waits for its QR code): started now
      if (!row.linked) { await openHeld(sessionId, true); return }
      // a linked one joins the paced start, SESSION_TAKEOVER_CONCURRENCY at once (a failover's burst waits on
      // the platform's answers more than on the CPU: 100 logins at 4 at once took ~5 s of a 12 s failover);
      // a lease round never waits for the queue
      leased.add(sessionId)
      pacer.add([sessionId], takeoverConcurrency)
    },
    async release (sessionId) {
      leased.delete(sessionId)
      await pacer.drop(sessionId)
      await platform.releaseSession(sessionId)
    },
    movable (sessionId) {
      return platform.snapshot(sessionId)?.connected === true
    }
  }

  app.decorate('supervisor', { progress: (only?: ReadonlySet<string>) => ({ concurrency, ...pacer.progress(only) }) })

  // after the statuses' own ready hook (its start-up cleanup): the plugins this one depends on are ready first
  app.addHook('onReady', async () => {
    await cluster.serve(supervisor)
  })
  // before the platform closes its sockets (preClose): nothing new starts
  app.addHook('preClose', async () => { pacer.close() })
}, { name: 'session-supervisor', dependencies: ['config', 'db', 'platform', 'statuses', 'cluster'] })
