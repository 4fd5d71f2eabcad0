import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../../src/config.js'
import type { ClaimedDelivery, WebhookOutbox } from '../../src/db/stores/webhooks.js'
import { sendWebhook, type SendOptions, type SendResult } from '../../src/webhooks/sender.js'

export type RetrySchedule = Pick<Config['webhooks'], 'maxAttempts' | 'baseDelayMs' | 'maxDelayMs'>

/** The longest the worker sleeps without looking at the outbox (new rows and retries also wake it). */
const MAX_SLEEP_MS = 30_000
/** A receiver gets this long to accept the connection, within the total timeout. */
const CONNECT_TIMEOUT_MS = 5000

/**
 * How long a node's claim on a delivery holds (an outbox shared by several nodes): an attempt ends within timeoutMs and its
 * outcome is written right after, so a claim still open a minute past that belongs to a node that died
 * mid-attempt, and another node sends the delivery again (receivers drop the repeat by its webhook-id).
 */
export function claimTtlMs (timeoutMs: number): number {
  return timeoutMs + 60_000
}

/**
 * Delay before the next attempt after `attempts` failed ones: exponential from baseDelayMs, growing so
 * that the delay before the last attempt is maxDelayMs (defaults: 5 s, 12 s, 31 s … 4.9 h, 12 h over 12
 * attempts, about 20 hours in all), each with ±20 % jitter so endpoints that failed together do not retry together.
 */
export function retryDelay (attempts: number, schedule: RetrySchedule, random: () => number = Math.random): number {
  const { baseDelayMs: base, maxDelayMs: max } = schedule
  const steps = Math.max(1, schedule.maxAttempts - 2)
  const ratio = max <= base ? 1 : (max / base) ** (1 / steps)
  const raw = Math.min(max, base * ratio ** Math.max(0, attempts - 1))
  return Math.max(1, Math.round(raw * (0.8 + 0.4 * random())))
}

export interface WorkerCounters {
  /** attempts by result: 2xx, retry scheduled, given up, 410 */
  succeeded: number
  retried: number
  failed: number
  gone: number
}

export interface WorkerDeps {
  outbox: WebhookOutbox
  config: Config['webhooks'] & { allowPrivate: boolean }
  log: FastifyBaseLogger
  userAgent: string
  /** an endpoint answered 410 and was disabled */
  onDisabled: (webhookId: string) => void
  /** tests swap the HTTP client */
  send?: (opts: SendOptions) => Promise<SendResult>
}

type Claimed = ClaimedDelivery

/**
 * Sends due deliveries, at most `concurrency` at once. Sleeps until the earliest due delivery (at most
 * MAX_SLEEP_MS) and is woken early by `kick()` whenever a delivery is added, finishes or is retried.
 */
export function createDeliveryWorker (deps: WorkerDeps) {
  const { outbox, config, log } = deps
  const send = deps.send ?? sendWebhook
  let stopped = true
  let timer: NodeJS.Timeout | null = null
  let timerAt = Infinity
  let abort = new AbortController()
  const inFlight = new Set<Promise<void>>()
  const counters: WorkerCounters = { succeeded: 0, retried: 0, failed: 0, gone: 0 }

  function schedule (delayMs: number): void {
    if (stopped) return
    const at = Date.now() + delayMs
    if (timer !== null && timerAt <= at) return
    if (timer !== null) clearTimeout(timer)
    timerAt = at
    timer = setTimeout(tick, delayMs)
    timer.unref()
  }

  /** a tick is under way; a wake-up meanwhile runs one more after it */
  let ticking = false
  let again = false
  /** resolves when the tick under way is over (stop waits for it: a claim must not outlive the database) */
  let tickOver: Promise<void> = Promise.resolve()
  let endTick = (): void => {}

  function tick (): void {
    timer = null
    timerAt = Infinity
    if (stopped) return
    if (ticking) { again = true; return }
    ticking = true
    tickOver = new Promise((resolve) => { endTick = resolve })
    const finish = (): void => {
      ticking = false
      endTick()
      if (again) { again = false; schedule(0) }
    }
    tickOnce().then(finish, (err: unknown) => {
      log.error({ err }, 'reading due webhook deliveries failed')
      finish()
      schedule(1000)
    })
  }

  async function tickOnce (): Promise<void> {
    const claimed = await outbox.claimDue(Date.now(), config.concurrency - inFlight.size)
    if (stopped) {
      // stopped while the claim was on its way: what it claimed goes back
      await Promise.allSettled(claimed.map(async (row) => { await outbox.release(row.id) }))
      return
    }
    for (const row of claimed) launch(row)
    // a full house wakes it again when a delivery finishes
    if (inFlight.size >= config.concurrency) return
    const next = await outbox.nextDueAt()
    if (next !== null) schedule(Math.min(Math.max(next - Date.now(), 0), MAX_SLEEP_MS))
  }

  function launch (row: Claimed): void {
    const done: Promise<void> = deliver(row)
      .catch((err: unknown) => { log.error({ err, deliveryId: row.id }, 'webhook delivery bookkeeping failed') })
      .finally(() => { inFlight.delete(done); schedule(0) })
    inFlight.add(done)
  }

  async function deliver (row: Claimed): Promise<void> {
    const signal = abort.signal
    const result = await send({
      url: row.url,
      secret: row.secret,
      messageId: row.messageId,
      body: row.body,
      allowPrivate: config.allowPrivate,
      connectTimeoutMs: Math.min(CONNECT_TIMEOUT_MS, config.timeoutMs),
      totalTimeoutMs: config.timeoutMs,
      userAgent: deps.userAgent,
      signal
    })
    if (signal.aborted) {
      // shutting down: not an attempt; it goes out again after the restart
      await outbox.release(row.id)
      return
    }
    const at = Date.now()
    const attempts = row.attempts + 1
    if (result.ok) {
      await outbox.succeeded({ id: row.id, at, statusCode: result.statusCode, error: null })
      counters.succeeded++
      return
    }
    const outcome = { id: row.id, at, statusCode: result.statusCode, error: result.error }
    if (result.statusCode === 410) {
      const reason = `The receiver answered 410 Gone at ${new Date(at).toISOString()}`
      // disabled first: another tick may look in between, and must not find the next delivery for this
      // endpoint due
      await outbox.disable(row.webhookId, reason, at)
      await outbox.failed({ ...outcome, error: `${result.error} (endpoint disabled)` })
      counters.gone++
      log.warn({ webhookId: row.webhookId, url: row.url }, 'webhook receiver answered 410 Gone; endpoint disabled')
      deps.onDisabled(row.webhookId)
    } else if (attempts >= config.maxAttempts) {
      await outbox.failed(outcome)
      counters.failed++
      log.warn({ webhookId: row.webhookId, deliveryId: row.id, attempts, error: result.error }, 'webhook delivery failed for good')
    } else {
      await outbox.retry(outcome, at + retryDelay(attempts, config))
      counters.retried++
      log.debug({ webhookId: row.webhookId, deliveryId: row.id, attempts, error: result.error }, 'webhook delivery will be retried')
    }
  }

  return {
    counters,
    /** number of deliveries being sent right now */
    inFlight: (): number => inFlight.size,
    /** deliveries a crash left in `sending` go back to pending, then the loop starts */
    async start (): Promise<void> {
      // the loop starts once the release is committed (a claim before it would be released too)
      let delay = 0
      try {
        const released = await outbox.releaseAll()
        if (released > 0) log.info({ released }, 'webhook deliveries interrupted by the last stop are pending again')
      } catch (err) {
        log.error({ err }, 'releasing interrupted webhook deliveries failed')
        delay = 1000
      }
      stopped = false
      abort = new AbortController()
      schedule(delay)
    },
    /** look at the outbox now */
    kick (): void { schedule(0) },
    /** stops the loop, aborts the attempts in flight (they stay pending) and waits for their bookkeeping */
    async stop (): Promise<void> {
      stopped = true
      if (timer !== null) { clearTimeout(timer); timer = null; timerAt = Infinity }
      abort.abort()
      await tickOver
      await Promise.allSettled([...inFlight])
    }
  }
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>
