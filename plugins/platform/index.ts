import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { PlatformError } from '../../src/platform/errors.js'
import type { Platform } from '../../src/platform/platform.js'
import { loggedSessionLinks } from './session-links.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** every session's platform connection; the only code that talks to Baileys */
    platform: Platform
  }
}

type AnyListener = (payload: never) => void

/**
 * The platform, loaded after the app is ready. Baileys and what it pulls in (protobuf definitions,
 * libsignal) take about a third of the service's module loading, and nothing in the first HTTP answer
 * needs them: the server listens first and the sessions restore right after (issue 14: HTTP answering
 * < 1 s after spawn with 100 stored sessions). Until then this stand-in keeps the listeners it is given
 * (handed over on load), reports no session (`snapshot` null, as for a session not started yet) and
 * runs every other call once the platform is there.
 */
function lazyPlatform (app: FastifyInstance): { platform: Platform, load: () => Promise<Platform | null> } {
  let real: Platform | undefined
  let loading: Promise<Platform> | undefined
  let closed = false
  const early: Array<[string, AnyListener]> = []
  const load = async (): Promise<Platform> => {
    if (closed && loading === undefined) throw new PlatformError('SESSION_NOT_FOUND')
    loading ??= import('../../src/platform/platform.js').then(({ createPlatform }) => {
      const platform = createPlatform({
        authState: app.stores.authState,
        links: loggedSessionLinks(app.stores.sessions, app.eventLog),
        receiptSink: app.viewerIngest.sink,
        interactionSink: app.interactionIngest.sink,
        phoneSink: app.contacts.sink,
        // a status's message as it went out (statuses.message_payload), for retry receipts after a restart
        sentStatuses: { payload: async (sessionId, messageId) => await app.stores.statuses.sentMessagePayload(sessionId, messageId) },
        contactStatusSink: app.contactStatusIntake.sink,
        wa: app.config.wa,
        logger: app.log,
        // burst-gc off (SPEED_TRICKS_OFF, src/speed-tricks.ts): no forced collection after a receipt burst
        timing: { sendOpenWaitMs: app.config.sendReconnectWaitMs, ...(app.config.speedTricksOff.has('burst-gc') ? { burstGcQuietMs: null } : {}) },
        // shared-key-transactions off: Baileys' own transaction context per socket
        sharedKeyTransactions: !app.config.speedTricksOff.has('shared-key-transactions')
      })
      for (const [event, listener] of early.splice(0)) platform.on(event as never, listener)
      real = platform
      return platform
    })
    return await loading
  }
  const platform: Platform = {
    on (event, listener) {
      if (real !== undefined) real.on(event, listener)
      else early.push([event, listener as AnyListener])
      return platform
    },
    off (event, listener) {
      if (real !== undefined) real.off(event, listener)
      else {
        const i = early.findIndex(([e, l]) => e === event && l === listener)
        if (i !== -1) early.splice(i, 1)
      }
      return platform
    },
    startSession: async (spec) => { await (await load()).startSession(spec) },
    restartSession: async (sessionId) => { await (await load()).restartSession(sessionId) },
    removeSession: async (sessionId) => { await (await load()).removeSession(sessionId) },
    updatePhoneNumber: async (sessionId, phone) => { await (await load()).updatePhoneNumber(sessionId, phone) },
    requestPairingCode: async (sessionId) => await (await load()).requestPairingCode(sessionId),
    snapshot: (sessionId) => real?.snapshot(sessionId) ?? null,
    reachable: (sessionId) => real?.reachable(sessionId) ?? false,
    // null until the platform is loaded (its start-up check runs then)
    compatibility: () => real?.compatibility() ?? null,
    clientExpiration: () => real?.clientExpiration() ?? null,
    newMessageId: (sessionId) => {
      if (real === undefined) throw new PlatformError('SESSION_NOT_FOUND')
      return real.newMessageId(sessionId)
    },
    sendStatus: async (sessionId, input) => await (await load()).sendStatus(sessionId, input),
    revokeStatus: async (sessionId, messageId, jids) => await (await load()).revokeStatus(sessionId, messageId, jids),
    viewContactStatus: async (sessionId, status) => { await (await load()).viewContactStatus(sessionId, status) },
    contactStatusMedia: async (mediaRef, host) => await (await load()).contactStatusMedia(mediaRef, host),
    likeContactStatus: async (sessionId, like) => await (await load()).likeContactStatus(sessionId, like),
    replyToContactStatus: async (sessionId, reply) => await (await load()).replyToContactStatus(sessionId, reply),
    // no session is connecting before the platform is loaded
    settled: async (sessionId, timeoutMs) => { if (real !== undefined) await real.settled(sessionId, timeoutMs) },
    preload: async () => { if (!closed) await load() },
    // nothing runs before the platform is loaded
    releaseSession: async (sessionId) => { if (real !== undefined) await real.releaseSession(sessionId) },
    close: async () => {
      closed = true
      if (loading === undefined) return
      await (await loading).close()
    }
  }
  return { platform, load: async () => closed ? null : await load() }
}

export interface PlatformOptions {
  /** stands in for the platform (buildApp's `platform`: a test's fake); nothing is loaded, restored or closed then */
  standIn?: Platform
}

export default fp<PlatformOptions>(async (app, opts) => {
  if (opts.standIn !== undefined) {
    app.decorate('platform', opts.standIn)
    return
  }
  const { platform } = lazyPlatform(app)
  app.decorate('platform', platform)
  // which sessions this node opens at start, and when, is the session supervisor's (plugins/session-supervisor):
  // the platform loads on the first session it is asked to start (or restore)
  // preClose: sockets end before the database plugin closes the connection their writes need
  app.addHook('preClose', async () => {
    await platform.close()
  })
}, { name: 'platform', dependencies: ['config', 'db', 'domain-events', 'viewer-ingest', 'interaction-ingest', 'contacts', 'contact-status-intake'] })
