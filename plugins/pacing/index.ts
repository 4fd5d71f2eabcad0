import fp from 'fastify-plugin'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Config } from '../../src/config.js'
import type { Stores } from '../../src/db/stores/index.js'
import { BadRequest, PacingLimit } from '../../src/errors.js'
import type { DomainEvents } from '../domain-events/index.js'

// Pacing (issue 24): per session, at most SEND_MAX_STATUSES_PER_DAY posts and SEND_MAX_RECIPIENTS_PER_DAY
// recipients in any 24 hours (counted from the stored statuses, so every node and a restart agree), and an
// exponential back-off after the platform refused a post with 429 (rate limit) or 463. A post over a limit
// is refused (429 with Retry-After); the scheduler asks first and holds a due run back instead.

const DAY_MS = 86_400_000
/** the first back-off after a 429 / 463; each further one doubles, up to BACKOFF_MAX_MS */
export const BACKOFF_BASE_MS = 60_000
export const BACKOFF_MAX_MS = 3_600_000
/** a refusal code the platform uses for sending too much: 429 rate-overlimit, 463 (a status refused for pacing) */
const PUSH_BACK = /(?:^|\D)(429|463)(?:\D|$)/

export interface PacingDeps {
  stores: Pick<Stores, 'statuses'>
  config: Pick<Config, 'pacing'>
  platform: Pick<FastifyInstance['platform'], 'on' | 'off'>
  events: Pick<DomainEvents, 'on' | 'off'>
  log: FastifyBaseLogger
  now?: () => number
}

export type PacingVerdict = { ok: true } | { ok: false, retryAfterMs: number, reason: string }

export function createPacing (deps: PacingDeps) {
  const { config, log } = deps
  const { statuses } = deps.stores
  const now = deps.now ?? Date.now
  /** per session: how many back-offs in a row, and until when the current one lasts */
  const backoff = new Map<string, { level: number, until: number }>()

  /** Whether a post to `recipients` may go out now, and if not, when it may. */
  async function check (sessionId: string, recipients: number): Promise<PacingVerdict> {
    const t = now()
    const held = backoff.get(sessionId)
    if (held !== undefined && held.until > t) {
      return { ok: false, retryAfterMs: held.until - t, reason: 'the platform refused a recent post (429/463); the session is backing off' }
    }
    const { maxStatusesPerDay: maxPosts, maxRecipientsPerDay: maxRecipients } = config.pacing
    if (maxPosts === 0 && maxRecipients === 0) return { ok: true }
    const posts = await statuses.postsSince(sessionId, t - DAY_MS)
    let freeAt = t
    if (maxPosts > 0 && posts.length + 1 > maxPosts) {
      // the oldest posts leave the window one by one: the one that makes room for this post
      freeAt = Math.max(freeAt, posts[posts.length - maxPosts].createdAt + DAY_MS)
    }
    if (maxRecipients > 0) {
      let sum = posts.reduce((n, p) => n + p.contactCount, 0)
      for (let i = 0; sum + recipients > maxRecipients && i < posts.length; i++) {
        sum -= posts[i].contactCount
        freeAt = Math.max(freeAt, posts[i].createdAt + DAY_MS)
      }
    }
    if (freeAt <= t) return { ok: true }
    const which = maxPosts > 0 && posts.length + 1 > maxPosts
      ? `SEND_MAX_STATUSES_PER_DAY (${maxPosts} posts in 24 hours)`
      : `SEND_MAX_RECIPIENTS_PER_DAY (${maxRecipients} recipients in 24 hours)`
    return { ok: false, retryAfterMs: freeAt - t, reason: `the session reached ${which}` }
  }

  /** Refuses a post over a limit: 429 with Retry-After (seconds). */
  async function admit (sessionId: string, recipients: number): Promise<void> {
    const max = config.pacing.maxRecipientsPerDay
    if (max > 0 && recipients > max) throw new BadRequest(`The post has ${recipients} recipients, more than SEND_MAX_RECIPIENTS_PER_DAY (${max}) allows in a day`)
    const verdict = await check(sessionId, recipients)
    if (verdict.ok) return
    const seconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000))
    throw Object.assign(new PacingLimit(`Not sent: ${verdict.reason}; retry in ${seconds} seconds`), { headers: { 'retry-after': String(seconds) } })
  }

  /** The platform refused a post: a 429 or 463 starts (or doubles) the session's back-off. */
  function refused (sessionId: string, error: string): void {
    if (!PUSH_BACK.test(error)) return
    const level = (backoff.get(sessionId)?.level ?? 0) + 1
    const delay = Math.min(BACKOFF_BASE_MS * 2 ** (level - 1), BACKOFF_MAX_MS)
    backoff.set(sessionId, { level, until: now() + delay })
    log.warn({ sessionId, error, backoffMs: delay }, 'the platform pushed back on a post: the session backs off')
  }

  /** A post went out: the back-off starts from the beginning next time. */
  function sent (sessionId: string): void {
    const held = backoff.get(sessionId)
    if (held !== undefined && held.until <= now()) backoff.delete(sessionId)
  }

  const onStatusError = (e: { sessionId: string, error: string }): void => { refused(e.sessionId, e.error) }
  const onUpdated = (e: { sessionId: string, action?: string, message?: string }): void => {
    if ((e.action === 'send-failed' || e.action === 'partial') && e.message !== undefined) refused(e.sessionId, e.message)
  }
  const onSent = (e: { sessionId: string }): void => { sent(e.sessionId) }

  return {
    check,
    admit,
    refused,
    /** the back-off in force for a session (for tests and logs), null when none */
    backoffOf: (sessionId: string): { level: number, until: number } | null => backoff.get(sessionId) ?? null,
    start (): void {
      deps.platform.on('status-error', onStatusError)
      deps.events.on('statuses-updated', onUpdated)
      deps.events.on('status-sent', onSent)
    },
    stop (): void {
      deps.platform.off('status-error', onStatusError)
      deps.events.off('statuses-updated', onUpdated)
      deps.events.off('status-sent', onSent)
    }
  }
}

export type Pacing = ReturnType<typeof createPacing>

declare module 'fastify' {
  interface FastifyInstance {
    /** per-session limits on posts and recipients, and the platform back-off */
    pacing: Pacing
  }
}

export default fp(async (app) => {
  const pacing = createPacing({ stores: app.stores, config: app.config, platform: app.platform, events: app.domainEvents, log: app.log.child({ plugin: 'pacing' }) })
  app.decorate('pacing', pacing)
  pacing.start()
  app.addHook('onClose', async () => { pacing.stop() })
}, { name: 'pacing', dependencies: ['config', 'db', 'platform', 'domain-events'] })
