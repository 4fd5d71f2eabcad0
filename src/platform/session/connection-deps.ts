import type { Config } from '../../config.js'
import type { Waiters } from '../async.js'
import type { SessionAuth } from '../auth-state.js'
import type { PlatformLogger as Logger } from '../logger.js'
import type { ContactStatusSink } from '../contact-statuses.js'
import type { InteractionSink, PhoneSink, PlatformTiming, ReceiptSeen, ReceiptSink, StatusRetrySeen } from '../types.js'
import type { ClientExpirations } from '../notices.js'
import type { Attempt } from './attempt.js'
import type { StatusSender } from './sender.js'

// What a session's connection (connection.ts) is given, and what its intakes (intakes.ts) take of it: a file of
// its own so that the intakes need not import the connection that creates them.

/** What a session hears from its current socket. */
export interface ConnectionEvents {
  onQr: (attempt: Attempt, qr: string) => void
  onNewLogin: () => void
  onOpen: (attempt: Attempt) => void
  onClose: (attempt: Attempt, error: Error | undefined) => void
}

export interface ConnectionDeps {
  sessionId: string
  auth: SessionAuth
  wa: Config['wa']
  baileysLogger: Logger
  log: Logger
  timing: PlatformTiming
  /** SocketOptions' `sharedKeyTransactions` */
  sharedKeyTransactions: boolean
  waiters: Waiters
  /** false once the session is removed: nothing from its sockets is taken any more */
  live: () => boolean
  /** where status views are committed before their receipt is acknowledged */
  receiptSink: ReceiptSink
  /** where reactions and replies to statuses are committed before their message is acknowledged */
  interactionSink: InteractionSink
  /** where the phone's saved contacts and status privacy are kept (session/phone.ts); none: not read */
  phoneSink?: PhoneSink
  /** where contacts' statuses are committed before their `<status>` stanza is acknowledged (contact-statuses.ts) */
  contactStatusSink: ContactStatusSink
  /** receipts as they arrive (views after their commit), for counting */
  onReceiptsSeen: (receipts: ReceiptSeen[]) => void
  /**
   * the session's sender: the statuses it sent (served to retry receipts: recent ones from memory, else as the
   * service stored them), its queue (a retry answer runs between sends, never beside one), and message updates
   */
  sender: Pick<StatusSender, 'sentMessage' | 'storedMessage' | 'exclusive' | 'onMessagesUpdate'>
  /** a status retry receipt was taken (answered or not): status-retries.ts */
  onStatusRetry: (seen: StatusRetrySeen) => void
  /** this node's announced client expirations, and the build they are about (notices.ts) */
  expirations: ClientExpirations
  build: string
  events: ConnectionEvents
}
