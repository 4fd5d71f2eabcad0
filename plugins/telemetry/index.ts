import fp from 'fastify-plugin'
import type { ConnectionStatus, PlatformEventMap } from '../../src/platform/types.js'

/**
 * Feeds the metrics from the service's own events, so no service has to know about Prometheus:
 * statuses and recipients from `status-sent`, receipts from the platform, gauges (sessions by state,
 * socket.io clients) read at scrape time. Receipt-to-commit latency is observed by the viewer ingest.
 */
export default fp(async (app) => {
  const { metrics, platform, domainEvents } = app

  domainEvents.on('status-sent', (e) => {
    metrics.statuses.inc({ state: 'sent' })
    metrics.recipients.inc(e.contactCount)
    // `timestamp` is when the status was accepted (its row was written before the first stanza went out)
    const seconds = (Date.now() - Date.parse(e.timestamp)) / 1000
    if (Number.isFinite(seconds) && seconds >= 0) metrics.statusSendDuration.observe(seconds)
  })

  // partial: a send that stopped part-way; failed: a send that reached nobody, or a status the platform
  // rejected after it was written
  domainEvents.on('statuses-updated', (e) => {
    if (e.action === 'partial') metrics.statuses.inc({ state: 'partial' })
    else if (e.action === 'failed' || e.action === 'send-failed') metrics.statuses.inc({ state: 'failed' })
  })

  const onReceipts = ({ receipts }: PlatformEventMap['status-receipts']): void => {
    const byKind = { read: 0, played: 0, delivery: 0 }
    for (const r of receipts) byKind[r.type]++
    for (const [kind, n] of Object.entries(byKind)) if (n > 0) metrics.receipts.inc({ kind }, n)
  }
  const onRetry = ({ outcome }: PlatformEventMap['status-retry']): void => { metrics.statusRetries.inc({ outcome }) }
  platform.on('status-receipts', onReceipts)
  platform.on('status-retry', onRetry)
  app.addHook('onClose', async () => {
    platform.off('status-receipts', onReceipts)
    platform.off('status-retry', onRetry)
  })

  metrics.onScrape(async () => {
    const counts: Record<string, number> = { open: 0, connecting: 0, close: 0, 'logged-out': 0 } satisfies Record<ConnectionStatus, number>
    for (const s of await app.sessions.list()) counts[s.status] = (counts[s.status] ?? 0) + 1
    for (const [state, n] of Object.entries(counts)) metrics.sessions.set({ state }, n)
  })
  metrics.onScrape(() => { metrics.socketClients.set(app.io.of('/').sockets.size) })
  // the announced end of this client build (plugins/health/client-expiry.ts)
  metrics.onScrape(() => { metrics.clientExpiry.set((platform.clientExpiration()?.expiresAt.getTime() ?? 0) / 1000) })

  // Webhooks: the worker counts attempts by result; the counter takes what was added since the last scrape.
  const reported: Record<string, number> = {}
  const RESULTS = { succeeded: 'success', retried: 'retry', failed: 'failed', gone: 'gone' } as const
  metrics.onScrape(async () => {
    const stats = await app.webhooks.stats()
    metrics.webhookQueueDepth.set(stats.pending)
    for (const [key, result] of Object.entries(RESULTS)) {
      const total = stats.attempts[key as keyof typeof RESULTS]
      const added = total - (reported[key] ?? 0)
      if (added > 0) metrics.webhookDeliveries.inc({ result }, added)
      reported[key] = total
    }
  })
  app.health.register('webhooks', async () => {
    const { pending, failing } = await app.webhooks.stats()
    // deliveries a receiver keeps refusing are the receiver's problem, not the service's: reported, not degraded
    return { healthy: true, details: { pending, failing } }
  })
}, { name: 'telemetry', dependencies: ['metrics', 'platform', 'domain-events', 'socket-io', 'sessions', 'webhooks', 'health'] })
