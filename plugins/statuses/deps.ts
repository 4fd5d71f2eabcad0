import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Static } from '@sinclair/typebox'
import type { Config } from '../../src/config.js'
import type { Stores } from '../../src/db/stores/index.js'
import type { DeletedStatusSchema } from '../../schemas/status.js'
import type { DomainEvents } from '../domain-events/index.js'

// What the statuses' files share: the status service's dependencies and its answers' types. A file of its
// own that imports none of them, so that each can import it (test/foundation/import-cycles.test.ts).

/** What reading, deleting and expiring the sent statuses use of the other decorators. */
export interface StatusDeps {
  stores: Pick<Stores, 'statuses' | 'viewers' | 'uploads' | 'contactStatuses' | 'sessions' | 'insights'>
  config: Pick<Config, 'statusTtlMs' | 'cleanupIntervalMs' | 'insightsRetentionMs'>
  platform: Pick<FastifyInstance['platform'], 'snapshot' | 'revokeStatus'>
  mediaStore: Pick<FastifyInstance['mediaStore'], 'remove'>
  events: Pick<DomainEvents, 'emit' | 'within'>
  log: FastifyBaseLogger
}

export type DeletedStatus = Static<typeof DeletedStatusSchema>
