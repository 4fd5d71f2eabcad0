import { randomBytes } from 'node:crypto'
import { isIP } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../../src/config.js'
import type { DeliveryStatus, Webhook } from '../../src/db/stores/webhooks.js'
import type { NewDelivery, WebhookStore } from '../../src/db/stores/webhooks.js'
import { BadRequest, DeliveryInFlight, DeliveryNotFound, SessionNotFound, WebhookNotFound } from '../../src/errors.js'
import { ADMIN, canSee, type Principal } from '../keys/store.js'
import type { EventName, EventPayloads } from '../../schemas/events.js'
import type { CreateWebhookBody, DeliveryView, UpdateWebhookBody, WebhookView, WebhookWithSecret } from '../../schemas/webhook.js'
import { APP_VERSION } from '../../src/version.js'
import { pageOf, pageRead, type PageQuery } from '../../src/paging.js'
import { isNonPublicAddress, resolveAll, urlProblem } from '../../src/webhooks/address-guard.js'
import { claimTtlMs, createDeliveryWorker, type WorkerDeps } from './worker.js'
import { toDeliveryView, toView } from './views.js'
import { createLogDispatcher, orderKeyOf } from './dispatch.js'

/** Delivery rows are kept this long by default (WEBHOOK_RETENTION_HOURS), whatever their state (except while being sent). */
export const DELIVERY_RETENTION_MS = 7 * 24 * 3_600_000

export interface WebhookDeps {
  store: WebhookStore
  config: Config
  log: FastifyBaseLogger
  /** tests swap the HTTP client */
  send?: WorkerDeps['send']
  /** whether scoped key `keyId` (still) sees the session: a webhook made with it receives only those events */
  keySees?: (keyId: string, sessionId: string) => boolean
  /** the event log's feed: each committed event wakes the dispatcher */
  eventLog?: { onEvent: (listener: () => void) => void }
}

/** `disabledAt`: null while enabled; else events that happened before it still go to the endpoint (held until it is enabled) */
interface Subscriber { id: string, events: Set<string> | null, sessionId: string | null, keyId: string | null, disabledAt: number | null }

/** `whsec_` + base64 of 24 random bytes: the Standard Webhooks secret format. */
export function newSecret (): string {
  return `whsec_${randomBytes(24).toString('base64')}`
}

/** A shared store: how often the endpoints are read again (another node may have changed them). */
const SUBSCRIBERS_RELOAD_MS = 5000

/**
 * Webhook endpoints, the outbox their deliveries go through, and the worker that sends them.
 * `enqueue` is the broadcaster's second sink beside socket.io.
 */
export function createWebhookService (deps: WebhookDeps) {
  const { store, config, log } = deps
  const keySees = deps.keySees ?? (() => false)
  const outbox = store.outbox({ nodeId: config.cluster.nodeId, ttlMs: claimTtlMs(config.webhooks.timeoutMs) })
  let subscribers: Subscriber[] = []
  let closed = false

  /** reads the endpoints; resolves when they are in place (a failed read is logged) */
  async function reload (): Promise<void> {
    try {
      subscribers = (await outbox.subscribers()).map((s) => ({
        id: s.id,
        events: s.events === null ? null : new Set(JSON.parse(s.events) as string[]),
        sessionId: s.sessionId,
        keyId: s.keyId,
        disabledAt: s.enabled ? null : s.updatedAt
      }))
    } catch (err) {
      log.error({ err }, 'reading webhook endpoints failed')
    }
  }

  const worker = createDeliveryWorker({
    outbox,
    config: { ...config.webhooks, allowPrivate: config.allowPrivateUrls },
    log,
    userAgent: `StatusTracker-Webhooks/${APP_VERSION}`,
    onDisabled: () => { void reload() },
    ...(deps.send !== undefined ? { send: deps.send } : {})
  })

  // the endpoints that were enabled when the event happened (`at`): deliveries are made from the log after
  // its commit, so a 410 met meanwhile must not take away an event that came before it. A webhook made with a
  // scoped key hears only the sessions that key (still) sees
  const targets = (event: string, sessionId: string | null, at: number): string[] => subscribers
    .filter((s) => (s.disabledAt === null || at < s.disabledAt) &&
      (s.events === null || s.events.has(event)) && (s.sessionId === null || s.sessionId === sessionId) &&
      (s.keyId === null || (sessionId !== null && keySees(s.keyId, sessionId))))
    .map((s) => s.id)

  // every event that reports a change: deliveries made from the event log after its commit (dispatch.ts)
  const dispatcher = createLogDispatcher({
    outbox,
    log,
    targets,
    written: () => { worker.kick() }
  })
  deps.eventLog?.onEvent(() => { dispatcher.kick() })

  /**
   * The events that are not logged (QR and pairing codes and their errors: docs/events-log.md): one
   * delivery row per matching enabled endpoint, written as the code comes (in the background: stop waits
   * for it). A code lost to a crash is stale anyway. Called from the broadcaster only.
   */
  function enqueue<K extends EventName> (event: K, payload: EventPayloads[K]): void {
    if (closed || subscribers.length === 0) return
    const sessionId = payload.sessionId
    const at = Date.now()
    const ids = targets(event, sessionId, at)
    if (ids.length === 0) return
    const body = JSON.stringify({ type: event, timestamp: new Date(at).toISOString(), data: payload })
    // one message id per event: the same on every attempt, and to every endpoint
    const messageId = `msg_${randomBytes(15).toString('base64url')}`
    const orderKey = orderKeyOf(payload as { sessionId: string, statusId?: string })
    const rows: NewDelivery[] = ids.map((webhookId) => ({ webhookId, messageId, eventType: event, sessionId, orderKey, body, at }))
    // committed in the background (stop waits for it), then the worker looks
    const tracked: Promise<void> = outbox.insert(rows).then(() => { worker.kick() }, (err: unknown) => {
      log.error({ err, event, endpoints: rows.length }, 'writing webhook deliveries failed; this event is not delivered')
    }).finally(() => { inserting.delete(tracked) })
    inserting.add(tracked)
  }

  /** Normalised URL, or a 400 naming the field. Names are resolved now too (and again at every send). */
  async function checkTarget (raw: string, field = 'body.url'): Promise<string> {
    let url: URL
    try { url = new URL(raw.trim()) } catch { throw new BadRequest(`${field} is not a valid URL`) }
    const problem = urlProblem(url, config.allowPrivateUrls)
    if (problem !== null) throw new BadRequest(`${field} ${problem}`)
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (!config.allowPrivateUrls && isIP(host) === 0) {
      // a name that does not resolve yet is accepted; each attempt checks again where it connects
      const bad = (await resolveAll(host)).find((a) => isNonPublicAddress(a.address))
      if (bad !== undefined) throw new BadRequest(`${field} resolves to a private or loopback address (${bad.address}); set ALLOW_PRIVATE_URLS=true for development`)
    }
    return url.href
  }

  /** the endpoint, if `owner` may see it: the admin key every one, a scoped key those it created */
  async function require (id: string, owner: Principal = ADMIN): Promise<Webhook> {
    const row = await store.find(id)
    if (row === undefined || (!owner.admin && row.keyId !== owner.id)) throw new WebhookNotFound()
    return row
  }

  async function create (input: CreateWebhookBody, owner: Principal = ADMIN): Promise<WebhookWithSecret> {
    // a scoped key names only its own sessions (another one is unknown to it), and its endpoint hears only them
    if (typeof input.sessionId === 'string' && !canSee(owner, input.sessionId)) throw new SessionNotFound()
    const url = await checkTarget(input.url)
    const now = Date.now()
    const row: Webhook = {
      id: `wh_${randomBytes(12).toString('base64url')}`,
      url,
      events: input.events === undefined || input.events === null ? null : JSON.stringify(input.events),
      sessionId: input.sessionId ?? null,
      description: input.description ?? null,
      secret: newSecret(),
      enabled: true,
      disabledReason: null,
      createdAt: now,
      updatedAt: now,
      keyId: owner.id
    }
    await store.insert(row)
    await reload()
    return { ...toView(row), secret: row.secret }
  }

  async function update (id: string, patch: UpdateWebhookBody, owner: Principal = ADMIN): Promise<WebhookView> {
    await require(id, owner)
    const url = patch.url === undefined ? undefined : await checkTarget(patch.url)
    const row = await store.update(id, {
      updatedAt: Date.now(),
      ...(url !== undefined ? { url } : {}),
      ...(patch.events !== undefined ? { events: patch.events === null ? null : JSON.stringify(patch.events) } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.enabled !== undefined ? { enabled: patch.enabled, disabledReason: null } : {})
    })
    if (row === undefined) throw new WebhookNotFound()
    await reload()
    // re-enabled: what waited is due again
    if (patch.enabled === true) worker.kick()
    return toView(row)
  }

  async function remove (id: string, owner: Principal = ADMIN): Promise<void> {
    await require(id, owner)
    // its deliveries go with it (foreign key cascade); one being sent finishes without a row to update
    if (!await store.remove(id)) throw new WebhookNotFound()
    await reload()
  }

  async function rotateSecret (id: string, owner: Principal = ADMIN): Promise<WebhookWithSecret> {
    await require(id, owner)
    const secret = newSecret()
    const row = await store.update(id, { secret, updatedAt: Date.now() })
    if (row === undefined) throw new WebhookNotFound()
    return { ...toView(row), secret }
  }

  async function deliveries (
    id: string, q: PageQuery & { status?: DeliveryStatus }, owner: Principal = ADMIN
  ): Promise<{ deliveries: DeliveryView[], nextCursor: string | null }> {
    await require(id, owner)
    const { limit, fetch, after } = pageRead(q)
    const { page, nextCursor } = pageOf(await store.deliveries(id, { limit: fetch, before: after, status: q.status }), limit, (row) => row.id)
    return { deliveries: page.map(toDeliveryView), nextCursor }
  }

  /** Sends a delivery again now, with a fresh retry schedule: a failed one, or a succeeded one (replay). */
  async function retry (id: string, deliveryId: string, owner: Principal = ADMIN): Promise<DeliveryView> {
    await require(id, owner)
    const n = Number(deliveryId)
    const existing = await store.findDelivery(id, n)
    if (existing === undefined) throw new DeliveryNotFound()
    if (!await outbox.requeue(id, n, Date.now())) throw new DeliveryInFlight()
    worker.kick()
    const row = await store.findDelivery(id, n)
    if (row === undefined) throw new DeliveryNotFound()
    return toDeliveryView(row)
  }

  /** Removes delivery rows older than WEBHOOK_RETENTION_HOURS (DELIVERY_RETENTION_MS by default). */
  async function prune (now = Date.now()): Promise<number> {
    return await outbox.prune(now - config.webhooks.retentionMs)
  }

  let pruneTimer: NodeJS.Timeout | null = null
  /** delivery inserts still on their way */
  const inserting = new Set<Promise<void>>()
  let reloadTimer: NodeJS.Timeout | null = null

  return {
    enqueue,
    create,
    list: async (owner: Principal = ADMIN): Promise<WebhookView[]> => (await store.list()).filter((r) => owner.admin || r.keyId === owner.id).map(toView),
    get: async (id: string, owner: Principal = ADMIN): Promise<WebhookView> => toView(await require(id, owner)),
    update,
    remove,
    rotateSecret,
    deliveries,
    retry,
    prune,
    /**
     * For health and metrics: deliveries waiting (pending or being sent), endpoints failing (retrying, or
     * disabled by a 410), deliveries in flight, and attempt results since the start.
     */
    stats: async () => ({ ...await outbox.counts(), inFlight: worker.inFlight(), attempts: { ...worker.counters } }),
    /** resolves once the endpoints are read (before the first event can be enqueued) */
    async start (): Promise<void> {
      const loaded = reload()
      void worker.start()
      // events a crash left past the cursor first, once the endpoints are read
      void loaded.then(() => { dispatcher.start({ backstop: store.shared }) })
      const pruneNow = (): void => {
        prune().then((removed) => { if (removed > 0) log.info({ removed }, 'old webhook deliveries removed') },
          (err: unknown) => { log.error({ err }, 'removing old webhook deliveries failed') })
      }
      pruneNow()
      pruneTimer = setInterval(pruneNow, config.cleanupIntervalMs)
      pruneTimer.unref()
      if (store.shared) {
        // other nodes change endpoints too: read them again now and then
        reloadTimer = setInterval(() => { void reload() }, SUBSCRIBERS_RELOAD_MS)
        reloadTimer.unref()
      }
      await loaded
    },
    /** stops taking events, aborts attempts in flight (they stay pending for the next start) */
    async stop (): Promise<void> {
      closed = true
      if (pruneTimer !== null) { clearInterval(pruneTimer); pruneTimer = null }
      if (reloadTimer !== null) { clearInterval(reloadTimer); reloadTimer = null }
      await dispatcher.stop()
      await Promise.all([...inserting])
      await worker.stop()
    }
  }
}

export type WebhookService = ReturnType<typeof createWebhookService>
