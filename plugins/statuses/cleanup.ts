import type { StatusDeps } from './deps.js'

export interface CleanupResult { statuses: number, uploads: number }

/**
 * Expiry: removes statuses older than the TTL (with viewers and media) and keeps their insights summaries,
 * removes summaries past INSIGHTS_RETENTION_DAYS, contacts' statuses posted before the TTL (they live 24 hours
 * on the platform too) and old unused uploads, now and on a timer.
 */
export function createCleanup (deps: Pick<StatusDeps, 'stores' | 'config' | 'events' | 'log'>, releaseMedia: (filename: string | null) => Promise<boolean>) {
  const { config, events, log } = deps
  const { uploads: uploadStore } = deps.stores
  let running: Promise<CleanupResult> | null = null
  let timer: NodeJS.Timeout | null = null

  async function run (): Promise<CleanupResult> {
    const now = Date.now()
    const before = now - config.statusTtlMs
    const retention = config.insightsRetentionMs
    // the summaries, the rows and one statuses-updated per affected session in one transaction: after a
    // crash either a status or its summary exists, never neither, never both
    const expired = await events.within(async (tx, emit) => {
      if (retention > 0) await tx.insights.keepExpired(before, now - retention)
      const gone = await tx.statuses.deleteBefore(before)
      const perSession = new Map<string, number>()
      for (const s of gone) perSession.set(s.sessionId, (perSession.get(s.sessionId) ?? 0) + 1)
      for (const [sessionId, n] of perSession) {
        emit('statuses-updated', { sessionId, action: 'cleanup', message: `${n} expired status${n === 1 ? '' : 'es'} removed` })
      }
      return gone
    })
    const pruned = await pruneInsights(now - retention)
    let uploads = 0
    for (const file of new Set(expired.map((s) => s.mediaFile))) {
      if (await releaseMedia(file)) uploads++
    }
    for (const file of await uploadStore.unusedBefore(before)) {
      if (await releaseMedia(file)) uploads++
    }
    const contactStatuses = [...(await deps.stores.contactStatuses.expire(before)).values()].reduce((a, b) => a + b, 0)
    if (expired.length > 0 || uploads > 0 || contactStatuses > 0 || pruned > 0) {
      log.info({ statuses: expired.length, uploads, contactStatuses, insights: pruned }, 'expired statuses and uploads removed')
    }
    return { statuses: expired.length, uploads }
  }

  /** Summaries past INSIGHTS_RETENTION_DAYS go, with one statuses-updated (`insights-cleanup`) per session, in one transaction. */
  async function pruneInsights (before: number): Promise<number> {
    return await events.within(async (tx, emit) => {
      const perSession = await tx.insights.prune(before)
      let total = 0
      for (const [sessionId, n] of perSession) {
        total += n
        emit('statuses-updated', { sessionId, action: 'insights-cleanup', message: `${n} insights summar${n === 1 ? 'y' : 'ies'} past retention removed` })
      }
      return total
    })
  }

  /** One cleanup run; concurrent calls share it. */
  async function cleanup (): Promise<CleanupResult> {
    running ??= run().finally(() => { running = null })
    return await running
  }

  function startTimer (): void {
    timer = setInterval(() => {
      cleanup().catch((err: unknown) => { log.error({ err }, 'status cleanup failed') })
    }, config.cleanupIntervalMs)
    timer.unref()
  }

  function stopTimer (): void {
    if (timer !== null) { clearInterval(timer); timer = null }
  }

  return { cleanup, startTimer, stopTimer }
}
