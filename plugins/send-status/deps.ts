import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Static } from '@sinclair/typebox'
import type { Config } from '../../src/config.js'
import type { Stores } from '../../src/db/stores/index.js'
import type { SendStatusAcceptedSchema, SendStatusResultSchema } from '../../schemas/status.js'
import type { DomainEvents } from '../domain-events/index.js'
import type { EventLog } from '../events/log.js'
import type { AudienceResolver } from '../audiences/resolve.js'

// What the posting's files share: its dependencies and its answers' types. A file of its own that imports
// none of them, so that each can import it (test/foundation/import-cycles.test.ts).

/** What posting a status uses of the other decorators. */
export interface SendStatusDeps {
  stores: Pick<Stores, 'statuses' | 'uploads' | 'sessions'>
  config: Pick<Config, 'sendReconnectWaitMs' | 'sendWaitMaxRecipients'>
  platform: Pick<FastifyInstance['platform'], 'snapshot' | 'reachable' | 'newMessageId' | 'sendStatus' | 'on' | 'off'>
  mediaStore: Pick<FastifyInstance['mediaStore'], 'exists' | 'open'>
  remoteMedia: Pick<FastifyInstance['remoteMedia'], 'check' | 'fetch'>
  events: Pick<DomainEvents, 'emit' | 'within'>
  /** the log's feed, told after a send appended its progress events in its own commit */
  eventLog: Pick<EventLog, 'committed'>
  log: FastifyBaseLogger
  /** resolves send-status `audience` (plugins/audiences) */
  audiences: Pick<AudienceResolver, 'resolve'>
  /** optional: pacing (plugins/pacing) refuses a post over the session's limits before it is recorded */
  admit?: (sessionId: string, recipients: number) => Promise<void>
}

export type SendStatusAnswer = Static<typeof SendStatusResultSchema>
export type SendStatusAccepted = Static<typeof SendStatusAcceptedSchema>
