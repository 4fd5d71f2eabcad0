import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Static } from '@sinclair/typebox'
import type { Config } from '../../src/config.js'
import type { Stores } from '../../src/db/stores/index.js'
import type { DeletedStatusSchema, SendStatusAcceptedSchema, SendStatusResultSchema } from '../../schemas/status.js'
import type { DomainEvents } from '../broadcaster/domain-events.js'
import type { EventLog } from '../events/log.js'
import type { AudienceResolver } from '../audiences/resolve.js'

// What the statuses' files share: the status service's dependencies and its answers' types. A file of its
// own that imports none of them, so that each can import it (test/foundation/import-cycles.test.ts).

/** What the status service uses of the other decorators. */
export interface StatusDeps {
  stores: Pick<Stores, 'statuses' | 'viewers' | 'uploads' | 'contactStatuses' | 'sessions' | 'insights'>
  config: Pick<Config, 'statusTtlMs' | 'cleanupIntervalMs' | 'sendReconnectWaitMs' | 'sendWaitMaxRecipients' | 'insightsRetentionMs'>
  platform: Pick<FastifyInstance['platform'], 'snapshot' | 'newMessageId' | 'sendStatus' | 'revokeStatus' | 'on' | 'off'>
  mediaStore: Pick<FastifyInstance['mediaStore'], 'exists' | 'open' | 'remove'>
  remoteMedia: Pick<FastifyInstance['remoteMedia'], 'check' | 'fetch'>
  events: Pick<DomainEvents, 'emit' | 'within'>
  /** the log's feed, told after a hot path appended events in its own commit (send progress, receipts) */
  eventLog: Pick<EventLog, 'committed'>
  log: FastifyBaseLogger
  /** optional: the viewer ingest observes receipt-to-commit latency there */
  metrics?: Pick<FastifyInstance['metrics'], 'receiptCommitLatency'>
  /** resolves send-status `audience` (plugins/audiences) */
  audiences: Pick<AudienceResolver, 'resolve'>
  /** optional: pacing (plugins/pacing) refuses a post over the session's limits before it is recorded */
  admit?: (sessionId: string, recipients: number) => Promise<void>
}

export type SendStatusAnswer = Static<typeof SendStatusResultSchema>
export type SendStatusAccepted = Static<typeof SendStatusAcceptedSchema>
export type DeletedStatus = Static<typeof DeletedStatusSchema>
