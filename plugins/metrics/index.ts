import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { ConnectionStatus } from '../../src/platform/types.js'

/** Outcomes of one webhook delivery attempt, the `result` label of status_tracker_webhook_deliveries_total. */
export type WebhookDeliveryResult = 'success' | 'retry' | 'failed' | 'gone'
/** What a status row ends as, the `state` label of status_tracker_statuses_total. */
export type StatusOutcome = 'sent' | 'partial' | 'failed'

const SESSION_STATES: readonly ConnectionStatus[] = ['open', 'connecting', 'close', 'logged-out']
const STATUS_OUTCOMES: readonly StatusOutcome[] = ['sent', 'partial', 'failed']
const RECEIPT_KINDS = ['read', 'played', 'delivery'] as const
const WEBHOOK_RESULTS: readonly WebhookDeliveryResult[] = ['success', 'retry', 'failed', 'gone']

/**
 * Every metric the service exports, in one registry per app instance (tests build many apps in one
 * process, and prom-client's global registry would refuse the second set of names).
 * Counters and histograms move where the work happens; gauges are set by `onScrape` callbacks just
 * before each scrape, so they cost nothing between scrapes.
 */
export function createMetrics () {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const registers = [registry]
  const scrapeHooks: Array<() => void | Promise<void>> = []

  const metrics = {
    registry,
    httpRequestDuration: new Histogram({
      name: 'status_tracker_http_request_duration_seconds',
      help: 'HTTP request duration by method, route pattern and status code',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers
    }),
    sessions: new Gauge({
      name: 'status_tracker_sessions',
      help: 'Sessions by connection state (open, connecting, close, logged-out)',
      labelNames: ['state'] as const,
      registers
    }),
    statuses: new Counter({
      name: 'status_tracker_statuses_total',
      help: 'Statuses by outcome: sent to every recipient, partial, failed',
      labelNames: ['state'] as const,
      registers
    }),
    recipients: new Counter({
      name: 'status_tracker_status_recipients_total',
      help: 'Recipients statuses were sent to',
      registers
    }),
    statusSendDuration: new Histogram({
      name: 'status_tracker_status_send_duration_seconds',
      help: 'Time from accepting a status to the platform having it for every recipient',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers
    }),
    receipts: new Counter({
      name: 'status_tracker_receipts_total',
      help: 'Status receipts received from the platform, by kind (read, played, delivery)',
      labelNames: ['kind'] as const,
      registers
    }),
    statusRetries: new Counter({
      name: 'status_tracker_status_retries_total',
      help: 'Status retry receipts (a recipient device could not decrypt a status) by outcome (answered, unknown-message, too-many, sending-device, bad-keys, refused, failed)',
      labelNames: ['outcome'] as const,
      registers
    }),
    receiptCommitLatency: new Histogram({
      name: 'status_tracker_receipt_commit_latency_seconds',
      help: 'Time from a view receipt\'s arrival to its commit in the database',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers
    }),
    clientExpiry: new Gauge({
      name: 'status_tracker_client_expiry_timestamp_seconds',
      help: 'When the platform stops accepting this client build, as announced to a session here (unix seconds; 0: none announced)',
      registers
    }),
    socketClients: new Gauge({
      name: 'status_tracker_socketio_clients',
      help: 'Connected socket.io clients',
      registers
    }),
    webhookDeliveries: new Counter({
      name: 'status_tracker_webhook_deliveries_total',
      help: 'Webhook delivery attempts by result (success, retry, failed, gone)',
      labelNames: ['result'] as const,
      registers
    }),
    clusterMoves: new Counter({
      name: 'status_tracker_cluster_session_moves_total',
      help: 'Sessions this node handed over to another node, by reason (rebalance: a node joined or came back; leave: this node stopped)',
      labelNames: ['reason'] as const,
      registers
    }),
    clusterHandOverDuration: new Histogram({
      name: 'status_tracker_cluster_handover_duration_seconds',
      help: 'One hand-over on the node that gives the sessions: their sockets ended and their leases moved, by reason',
      labelNames: ['reason'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers
    }),
    clusterTakeOverDuration: new Histogram({
      name: 'status_tracker_cluster_takeover_duration_seconds',
      help: 'On the node a session came to: from finding its lease to its socket open, by how it came (handover, failover, orphan)',
      labelNames: ['how'] as const,
      buckets: [0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 20, 30],
      registers
    }),
    webhookQueueDepth: new Gauge({
      name: 'status_tracker_webhook_queue_depth',
      help: 'Webhook deliveries waiting to be delivered',
      registers
    }),

    /** Runs before every scrape; sets gauges from live state. A callback that throws is logged and skipped. */
    onScrape (fn: () => void | Promise<void>): void {
      scrapeHooks.push(fn)
    },

    /** The Prometheus text exposition of every metric, gauges refreshed first. */
    async scrape (onError: (err: unknown) => void = () => {}): Promise<string> {
      for (const hook of scrapeHooks) {
        try {
          await hook()
        } catch (err) {
          onError(err)
        }
      }
      return await registry.metrics()
    }
  }

  // every series exists from the start, so rate() and absent() see 0 rather than nothing
  for (const state of SESSION_STATES) metrics.sessions.set({ state }, 0)
  for (const state of STATUS_OUTCOMES) metrics.statuses.inc({ state }, 0)
  for (const kind of RECEIPT_KINDS) metrics.receipts.inc({ kind }, 0)
  for (const result of WEBHOOK_RESULTS) metrics.webhookDeliveries.inc({ result }, 0)
  for (const reason of ['rebalance', 'leave'] as const) metrics.clusterMoves.inc({ reason }, 0)
  return metrics
}

export type AppMetrics = ReturnType<typeof createMetrics>

declare module 'fastify' {
  interface FastifyInstance {
    /** the app's Prometheus registry and metrics (see docs/operations.md, Metrics) */
    metrics: AppMetrics
  }
}

/** The registry, and the HTTP duration of every request by route pattern (never the raw URL) and code. */
export default fp(async (app) => {
  const metrics = createMetrics()
  app.decorate('metrics', metrics)

  app.addHook('onResponse', (req, reply, done) => {
    // requests that match no route share one label, so random URLs cannot grow the series without bound
    const route = req.routeOptions.url ?? 'unmatched'
    metrics.httpRequestDuration.observe({ method: req.method, route, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000)
    done()
  })
  app.addHook('onClose', async () => { metrics.registry.clear() })
}, { name: 'metrics' })
