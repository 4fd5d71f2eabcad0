import type { Config } from '../config.js'
import type { AuthStateStore } from '../db/stores/auth-state.js'
import { QUIET_MS } from './burst-gc.js'
import { createAuthStore } from './auth-state.js'
import { checkCompatibility, describeBroken, type Compatibility } from './baileys/index.js'
import { clientBuild } from './baileys/notices.js'
import { downloadStatusMedia, sendStatusReadReceipt, type StatusMediaRef } from './baileys/status-stanza.js'
import type { ContactStatusSink } from './contact-statuses.js'
import { sendStatusLike, sendStatusReply, type LikeInput, type ReplyInput } from './contact-status-answers.js'
import { TypedEmitter } from './emitter.js'
import { PlatformError } from './errors.js'
import { ClientExpirations } from './notices.js'
import { quieter, type PlatformLogger } from './logger.js'
import { SessionRuntime } from './session/runtime.js'
import { applyTestTrustRoot } from './trust-root.js'
import type { InteractionSink, PhoneSink, PlatformEventMap, PlatformTiming, ReceiptSink, SendStatusInput, SendStatusResult, SentStatusStore, SessionLinks, SessionSnapshot, SessionSpec } from './types.js'

export type { PlatformLogger } from './logger.js'
export type { InteractionSink, PhoneContact, PhoneSink, PhoneStatusPrivacy, PlatformTiming, ReceiptSink, StatusInteraction, StatusView } from './types.js'
export type { BrokenAssumption, Compatibility } from './baileys/index.js'
export type { ContactStatus, ContactStatusSink } from './contact-statuses.js'

export const DEFAULT_TIMING: PlatformTiming = {
  reconnectBaseMs: 1000,
  reconnectMaxMs: 60_000,
  pairingReadyTimeoutMs: 30_000,
  sendOpenWaitMs: 60_000,
  sendAckTimeoutMs: 30_000,
  sendAttempts: 5,
  sendRetryBaseMs: 1000,
  sendRetryMaxMs: 15_000,
  logoutTimeoutMs: 10_000,
  socketEndTimeoutMs: 5000,
  lidLookupIntervalMs: 30_000,
  burstGcQuietMs: QUIET_MS
}

export interface PlatformOptions {
  /** holds the Baileys auth state (auth_creds, auth_keys) */
  authState: AuthStateStore
  /** the `sessions` columns the platform reads and writes */
  links: SessionLinks
  /** commits status views before their receipts are acknowledged (see ReceiptSink) */
  receiptSink: ReceiptSink
  /**
   * commits reactions and replies to statuses before their messages are acknowledged (see InteractionSink);
   * without one they are ignored like any other chat
   */
  interactionSink?: InteractionSink
  /** keeps the linked phone's saved contacts and status privacy (see PhoneSink); without one they are not read */
  phoneSink?: PhoneSink
  /** the statuses' stored messages, for retry receipts (see SentStatusStore); without it only the recent ones in memory */
  sentStatuses?: SentStatusStore
  /** commits contacts' statuses before their `<status>` stanzas are acknowledged (see ContactStatusSink); without one they are acked unkept */
  contactStatusSink?: ContactStatusSink
  wa: Config['wa']
  logger: PlatformLogger
  /** reconnect / wait bounds; the defaults suit production */
  timing?: Partial<PlatformTiming>
  /**
   * every socket's Signal key transactions in one shared context (baileys/key-transactions.ts), so a
   * promise costs the same at 1,000 sessions as at one; false (SPEED_TRICKS_OFF shared-key-transactions):
   * Baileys' own, one AsyncLocalStorage per socket. Default true.
   */
  sharedKeyTransactions?: boolean
}

const IGNORE_INTERACTIONS: InteractionSink = { commit: async () => {}, lidsMapped: async () => {}, unmappedLids: async () => [] }
/** still acked (unacked, the platform ends the stream every ~50 minutes), not kept */
const IGNORE_CONTACT_STATUSES: ContactStatusSink = { commit: async () => {} }

type Listener<K extends keyof PlatformEventMap> = (payload: PlatformEventMap[K]) => void

/**
 * The Baileys adapter: every linked account's socket, its auth state in the database, linking, reconnects,
 * status sending and receipts. Nothing outside src/platform sees a Baileys type.
 */
export function createPlatform (options: PlatformOptions) {
  const { wa, links, receiptSink } = options
  const interactionSink = options.interactionSink ?? IGNORE_INTERACTIONS
  const logger = options.logger.child({ module: 'platform' })
  // the internals of Baileys the service relies on (baileys/assumptions.ts): when one does not hold, no session starts
  const compat: Compatibility = checkCompatibility()
  for (const b of compat.broken) {
    logger.error({ assumption: b.name, expects: b.expects, source: b.source, baileys: compat.baileys }, `Baileys assumption "${b.name}" does not hold: no session will start (see UPGRADING.md)`)
  }
  const assertCompatible = (): void => { if (!compat.compatible) throw new PlatformError('PLATFORM_INCOMPATIBLE', describeBroken(compat)) }
  if (wa.testTrustRoot !== null && !compat.broken.some((b) => b.name === 'noise-trust-root')) applyTestTrustRoot(wa.testTrustRoot, logger)
  const timing: PlatformTiming = { ...DEFAULT_TIMING, ...options.timing }
  const events = new TypedEmitter<PlatformEventMap>(logger)
  const auth = createAuthStore(options.authState, (err, what) => { logger.error({ err }, what) })
  const baileysLogger = options.logger.child({ module: 'baileys' }, { level: quieter(options.logger.level) })
  const runtimes = new Map<string, SessionRuntime>()
  let closed = false

  const contactStatusSink = options.contactStatusSink ?? IGNORE_CONTACT_STATUSES
  const deps = {
    wa, logger, baileysLogger, events, links, receiptSink, interactionSink, contactStatusSink, timing, sentStatuses: options.sentStatuses,
    sharedKeyTransactions: options.sharedKeyTransactions ?? true,
    expirations: new ClientExpirations(),
    build: clientBuild(wa.version),
    ...(options.phoneSink !== undefined ? { phoneSink: options.phoneSink } : {})
  }

  function runtime (sessionId: string): SessionRuntime {
    assertCompatible()
    const rt = runtimes.get(sessionId)
    if (rt === undefined || closed) throw new PlatformError('SESSION_NOT_FOUND')
    return rt
  }

  function ensureRuntime (spec: SessionSpec): SessionRuntime {
    let rt = runtimes.get(spec.sessionId)
    if (rt === undefined) {
      rt = new SessionRuntime(spec, auth.open(spec.sessionId), deps)
      runtimes.set(spec.sessionId, rt)
    }
    return rt
  }

  /** the handshake waits under way (settled), ended at close */
  const settling = new Set<() => void>()

  /**
   * Resolves once the session is no longer connecting with a linked account (open, closed, logged out, or
   * linking: waiting for a phone is no handshake), or after `timeoutMs`, or at close.
   */
  async function settled (sessionId: string, timeoutMs: number): Promise<void> {
    const connecting = (): boolean => !closed && runtimes.get(sessionId)?.connectingLinked() === true
    if (!connecting()) return
    await new Promise<void>((resolve) => {
      const done = (): void => { clearTimeout(timer); settling.delete(done); events.off('connection-status', onStatus); resolve() }
      const onStatus = (e: { sessionId: string }): void => { if (e.sessionId === sessionId && !connecting()) done() }
      const timer = setTimeout(done, timeoutMs)
      settling.add(done)
      events.on('connection-status', onStatus)
    })
  }

  async function startSession (spec: SessionSpec): Promise<void> {
    if (closed) throw new Error('platform is closed')
    assertCompatible()
    if (!runtimes.has(spec.sessionId)) await auth.prepare(spec.sessionId)
    await ensureRuntime(spec).start(spec)
  }

  const platform = {
    on<K extends keyof PlatformEventMap & string> (event: K, listener: Listener<K>) {
      events.on(event, listener)
      return platform
    },
    off<K extends keyof PlatformEventMap & string> (event: K, listener: Listener<K>) {
      events.off(event, listener)
      return platform
    },

    /** Starts (or resumes) a session: a linked one reconnects, an unlinked one starts linking. */
    startSession,

    /**
     * What the start-up check found (baileys/compat.ts): whether sessions can start, and what broke
     * (null only from a stand-in that has not loaded the platform yet).
     */
    compatibility (): Compatibility | null {
      return { ...compat, broken: compat.broken.map((b) => ({ ...b })) }
    },

    /**
     * The earliest date the server announced (`<ib><client_expiration>`, notices.ts) to a session running here
     * for the build it runs: after it the platform is expected to refuse the service's sessions. null: none.
     */
    clientExpiration (): { expiresAt: Date, sessionId: string } | null {
      return closed ? null : deps.expirations.earliest((id) => runtimes.has(id))
    },

    /** Tears the socket down and connects again; also starts a new link attempt after a link timeout. */
    async restartSession (sessionId: string): Promise<void> {
      await runtime(sessionId).restart()
    },

    /** Logs the device out when linked, then deletes its auth rows. The caller deletes the sessions row. */
    async removeSession (sessionId: string): Promise<void> {
      if (closed) throw new PlatformError('SESSION_NOT_FOUND')
      // nothing can log the device out through this Baileys: its auth rows go, the row after them
      if (!compat.compatible) { await auth.clear(sessionId); return }
      let rt = runtimes.get(sessionId)
      if (rt === undefined) {
        const row = await links.get(sessionId)
        if (row === undefined) {
          await auth.clear(sessionId)
          throw new PlatformError('SESSION_NOT_FOUND')
        }
        await auth.prepare(sessionId)
        rt = new SessionRuntime({ sessionId, authMethod: row.authMethod, phoneNumber: row.phoneNumber }, auth.open(sessionId), deps)
      }
      try {
        await rt.remove()
      } finally {
        runtimes.delete(sessionId)
      }
    },

    /** While unlinked, the next pairing code (pushed at once if a link attempt is running) uses this number. */
    async updatePhoneNumber (sessionId: string, phoneNumber: string): Promise<void> {
      await runtime(sessionId).updatePhoneNumber(phoneNumber)
    },

    /** A fresh 8-character pairing code (also pushed as `pairing-code`). */
    async requestPairingCode (sessionId: string): Promise<string> {
      return await runtime(sessionId).requestPairingCode()
    },

    snapshot (sessionId: string): SessionSnapshot | null {
      return closed ? null : runtimes.get(sessionId)?.snapshot() ?? null
    },

    /**
     * Open, or a linked session between two sockets that reconnects by itself (waits.ts reachable): a send, like,
     * reply or view goes ahead and waits for the socket; any other session is not connected.
     */
    reachable: (sessionId: string): boolean => !closed && runtimes.get(sessionId)?.reachable() === true,

    /** A platform message id from Baileys' generator for this account (store it before sending). */
    newMessageId (sessionId: string): string {
      return runtime(sessionId).newMessageId()
    },

    async sendStatus (sessionId: string, input: SendStatusInput): Promise<SendStatusResult> {
      return await runtime(sessionId).sendStatus(input)
    },

    /** Revokes a status for the JIDs it was sent to (`SendStatusResult.recipientJids`); true when sent. */
    async revokeStatus (sessionId: string, messageId: string, recipientJids: string[]): Promise<boolean> {
      return await runtime(sessionId).revokeStatus(messageId, recipientJids)
    },

    /**
     * Tells the contact their status was viewed: the read receipt WA Web sends (baileys/status-stanza.ts), only
     * when asked (`participant`: the stanza's, `participantPn`: the poster's number JID when known).
     */
    async viewContactStatus (sessionId: string, status: { messageId: string, participant: string, participantPn: string | null }): Promise<void> {
      await sendStatusReadReceipt(await runtime(sessionId).openSock(), status)
    },

    /** Likes a contact's status (empty emoji: takes the like back): contact-status-answers.ts; resolves once acknowledged. */
    async likeContactStatus (sessionId: string, like: LikeInput): Promise<{ messageId: string, devices: number }> {
      const rt = runtime(sessionId)
      return await sendStatusLike(await rt.openSock(), rt.newMessageId(), like, timing.sendAckTimeoutMs)
    },

    /** Replies to a contact's status, quoting it (contact-status-answers.ts); resolves once acknowledged. */
    async replyToContactStatus (sessionId: string, reply: ReplyInput): Promise<{ messageId: string }> {
      const rt = runtime(sessionId)
      return await sendStatusReply(await rt.openSock(), rt.newMessageId(), reply, timing.sendAckTimeoutMs)
    },

    /** The decrypted media of a contact's status (its stored `mediaRef`), streamed from `host` (absent: the one its URL names). */
    async contactStatusMedia (mediaRef: string, host?: string): Promise<import('node:stream').Readable> {
      assertCompatible()
      return await downloadStatusMedia(JSON.parse(mediaRef) as StatusMediaRef, host)
    },

    /**
     * Ends the session's socket here without logging out or touching its auth state (another node owns
     * it now, or may soon); a no-op for a session not running here.
     */
    async releaseSession (sessionId: string): Promise<void> {
      const rt = runtimes.get(sessionId)
      if (rt === undefined) return
      runtimes.delete(sessionId)
      await rt.shutdown()
      auth.release(sessionId)
    },

    /**
     * Resolves once the session's handshake is over (it is open, failed, or waits for a phone to link it), or
     * after `timeoutMs`: what a paced start (plugins/session-supervisor) holds a place for.
     */
    settled,

    /** Nothing to load here (plugins/platform's stand-in loads Baileys on it: a node does so before it takes leases). */
    async preload (): Promise<void> {},

    /** Ends every socket and timer; nothing reconnects afterwards. */
    async close (): Promise<void> {
      if (closed) return
      closed = true
      for (const done of [...settling]) done()
      await Promise.all([...runtimes.values()].map(async (rt) => { await rt.shutdown() }))
      runtimes.clear()
      // auth writes the sockets queued commit before the database closes
      await auth.flush()
    }
  }
  return platform
}

export type Platform = ReturnType<typeof createPlatform>
