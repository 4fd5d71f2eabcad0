import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Config } from '../../src/config.js'
import type { Schedule } from '../../src/db/stores/schedules.js'
import type { RunToRecord, ScheduleStore } from '../../src/db/stores/schedules.js'
import { runAfter } from '../../src/schedules/recurrence.js'
import type { DomainEvents } from '../domain-events/index.js'
import type { Pacing } from '../pacing/index.js'
import type { StatusService } from '../statuses/index.js'
import type { ResolvedRecipients } from '../send-status/recipients.js'
import { bodyOf, ruleOf } from './service.js'

// The scheduler (issue 24). Every POLL_MS each node reads the active schedules that are due and, for the
// sessions whose socket is open here (in a cluster: the sessions it owns), takes the run in the database
// (takeRun: the schedule moves on from the due time it read, compare-and-set, with the run recorded in the
// same transaction) and posts it through the status service. Only one node's UPDATE matches, so a run fires
// once; a node that stops after taking a run never posts it a second time (its run is recorded `failed`).
// A run due more than SCHEDULE_GRACE_MS ago (the service was down, no node had the session) is recorded
// `missed` by whichever node sees it first. Pacing holds a due run back (deferred) instead of failing it.
// A run's end (fired, failed, missed) and its event are one commit (events.within): a client catching up
// from the event log sees every recorded run end, and none that was not recorded.

export const POLL_MS = 1000
/** a run fired later than this after its time is flagged `late` */
export const LATE_MS = 5000
/** missed runs recorded one by one per pass at most (a long outage of a frequent schedule) */
const MISSED_PER_PASS = 50

export interface SchedulerDeps {
  schedules: ScheduleStore
  config: Pick<Config, 'schedules' | 'cluster'>
  platform: Pick<FastifyInstance['platform'], 'snapshot'>
  statuses: Pick<StatusService, 'submit' | 'recipientsOf'>
  pacing?: Pick<Pacing, 'check'>
  events: Pick<DomainEvents, 'within' | 'on' | 'off'>
  log: FastifyBaseLogger
  /** the clock (tests may inject one) */
  now?: () => number
}

export function createScheduler (deps: SchedulerDeps) {
  const { config, platform, statuses, pacing, events, log } = deps
  const store = deps.schedules
  const now = deps.now ?? Date.now
  const nodeId = config.cluster.nodeId
  let timer: NodeJS.Timeout | null = null
  let running: Promise<void> | null = null
  let stopped = false

  const iso = (ms: number): string => new Date(ms).toISOString()
  const record = (state: RunToRecord['state'], t: number, late: boolean, error: string | null): RunToRecord =>
    ({ state, firedAt: state === 'firing' ? t : null, late, error, nodeId })

  /** The run after `at`, or null when the rule has no more (until passed, count reached). */
  function nextAfter (s: Schedule, at: number): number | null {
    const rule = ruleOf(s)
    if (rule === null || (rule.count !== undefined && s.runCount + 1 >= rule.count)) return null
    return runAfter(s.firstAt, rule, at)
  }

  async function missed (s: Schedule, t: number): Promise<void> {
    let row = s
    for (let i = 0; i < MISSED_PER_PASS && row.nextRunAt !== null; i++) {
      const at = row.nextRunAt
      if (t - Math.max(at, row.deferredUntil ?? 0) <= config.schedules.graceMs) return
      const next = nextAfter(row, at)
      const error = `Missed: due ${iso(at)}, more than SCHEDULE_GRACE_MS (${config.schedules.graceMs} ms) ago, while no node could post it`
      const runId = await events.within(async (tx, emit) => {
        const id = await tx.schedules.takeRun(row.id, at, next, record('missed', t, false, error), t)
        if (id !== null) emit('scheduled-status-failed', { sessionId: row.sessionId, scheduleId: row.id, at: iso(at), state: 'missed', error })
        return id
      })
      if (runId === null) return // another node recorded it
      log.warn({ sessionId: row.sessionId, scheduleId: row.id, at: iso(at) }, 'scheduled run missed')
      row = { ...row, nextRunAt: next, runCount: row.runCount + 1, deferredUntil: null }
    }
  }

  /** A run ends failed and `scheduled-status-failed` announces it, in one commit; the status it posted, if any, stays named. */
  async function recordFailure (
    runId: number, f: { sessionId: string, scheduleId: string, at: number, error: string, statusId: number | undefined }
  ): Promise<void> {
    const posted = f.statusId === undefined ? {} : { statusId: f.statusId }
    await events.within(async (tx, emit) => {
      await tx.schedules.finishRun(runId, { state: 'failed', error: f.error, ...posted })
      emit('scheduled-status-failed', { sessionId: f.sessionId, scheduleId: f.scheduleId, at: iso(f.at), state: 'failed', ...(f.statusId === undefined ? {} : { statusId: String(f.statusId) }), error: f.error })
    })
  }

  async function fire (s: Schedule, t: number): Promise<void> {
    const at = s.nextRunAt as number
    const body = bodyOf(s)
    // pacing's look-ahead resolves the recipients once for the run and the send takes them; one that does not
    // resolve (a saved audience deleted meanwhile, contacts not known) leaves it to the send, which says why
    let resolved: ResolvedRecipients | undefined
    if (pacing !== undefined) {
      try { resolved = await statuses.recipientsOf(s.sessionId, body) } catch { /* the send says why */ }
      const verdict = await pacing.check(s.sessionId, Math.max(1, resolved?.recipients.length ?? 1))
      if (!verdict.ok) {
        await store.update(s.id, { deferredUntil: t + verdict.retryAfterMs }, t)
        log.info({ sessionId: s.sessionId, scheduleId: s.id, retryAfterMs: verdict.retryAfterMs, reason: verdict.reason }, 'scheduled run deferred by pacing')
        return
      }
    }
    const late = t - at > LATE_MS
    const runId = await store.takeRun(s.id, at, nextAfter(s, at), record('firing', t, late, null), t)
    if (runId === null) return // another node took it
    let statusId: number | undefined
    try {
      const started = await statuses.submit(s.sessionId, { ...body, wait: false }, resolved)
      const id = Number(started.statusId)
      statusId = id
      await events.within(async (tx, emit) => {
        await tx.schedules.finishRun(runId, { state: 'fired', statusId: id })
        // a send that reached nobody before the run was recorded (its status is gone already): onUpdated missed it
        if (await tx.statuses.find(s.sessionId, id) === undefined) throw new Error('The send reached nobody; the status was not kept')
        emit('scheduled-status-fired', { sessionId: s.sessionId, scheduleId: s.id, statusId: started.statusId, at: iso(at), firedAt: iso(t), late })
      })
      log.info({ sessionId: s.sessionId, scheduleId: s.id, statusId: started.statusId, late }, 'scheduled status fired')
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err)
      // a status that went out but whose run could not be recorded fired (its id is kept with the failure)
      await recordFailure(runId, { sessionId: s.sessionId, scheduleId: s.id, at, error, statusId })
      log.warn({ err, sessionId: s.sessionId, scheduleId: s.id }, 'scheduled status failed')
    }
  }

  /** One pass over the due schedules. */
  async function tick (): Promise<void> {
    const t = now()
    for (const s of await store.due(t)) {
      if (stopped) return
      const at = s.nextRunAt as number
      try {
        if (t - Math.max(at, s.deferredUntil ?? 0) > config.schedules.graceMs) await missed(s, t)
        else if (platform.snapshot(s.sessionId)?.connected === true) await fire(s, t)
        // else: not connected here (or owned by another node): its owner fires it, or it is missed after the grace
      } catch (err) {
        log.error({ err, scheduleId: s.id }, 'scheduler: could not run a schedule')
      }
    }
  }

  /** A send that ended with nobody having the status fails its run too. */
  const onUpdated = (e: { sessionId: string, action?: string, statusId?: string, message?: string }): void => {
    if (e.action !== 'send-failed' || e.statusId === undefined) return
    const statusId = Number(e.statusId)
    void (async () => {
      const run = await store.runOfStatus(statusId)
      if (run === undefined) return
      await recordFailure(run.id, { sessionId: run.sessionId, scheduleId: run.scheduleId, at: run.at, error: e.message ?? 'the send failed', statusId })
    })().catch((err: unknown) => { log.warn({ err, statusId }, 'scheduler: could not record a failed run') })
  }

  function loop (): void {
    if (stopped) return
    timer = setTimeout(() => {
      running = tick().catch((err: unknown) => { log.error({ err }, 'scheduler pass failed') }).finally(() => { running = null; loop() })
    }, POLL_MS)
  }

  return {
    tick,
    /** Runs this node left `firing` (it stopped between taking a run and recording its status) are failed; then polls. */
    async start (): Promise<void> {
      stopped = false
      for (const run of await store.interruptedRuns(nodeId)) {
        await store.finishRun(run.id, { state: 'failed', error: 'The service stopped while the run was starting; not posted again (a run fires at most once)' })
      }
      events.on('statuses-updated', onUpdated)
      loop()
    },
    async stop (): Promise<void> {
      stopped = true
      if (timer !== null) clearTimeout(timer)
      timer = null
      events.off('statuses-updated', onUpdated)
      await running
    }
  }
}
