import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Stores } from '../../src/db/stores/index.js'
import type { EventLog } from '../events/log.js'

/** What the viewer ingest uses of the other decorators. */
export interface ViewerIngestDeps {
  stores: Pick<Stores, 'viewers'>
  /** the log's feed, told after the ingest appended events in its own commit */
  eventLog: Pick<EventLog, 'committed'>
  log: FastifyBaseLogger
  /** optional: receipt-to-commit latency is observed there */
  metrics?: Pick<FastifyInstance['metrics'], 'receiptCommitLatency'>
}
