import type { WASocket } from '@whiskeysockets/baileys'
import { ContactStatusIntake } from '../contact-statuses.js'
import { InteractionIntake } from '../interactions.js'
import { ReceiptIntake } from '../receipts.js'
import type { ConnectionDeps } from './connection-deps.js'
import { PhoneSync } from './phone.js'
import { StatusRetries } from './status-retries.js'

/**
 * What a session takes in from its sockets, each committed before it is acknowledged: status views, reactions
 * and replies, contacts' statuses, status retry receipts and what the phone shares. One set per session; every
 * socket of it is listened to (receipts and rejections are facts even from a socket being replaced).
 */
export class StanzaIntakes {
  readonly receipts: ReceiptIntake
  readonly interactions: InteractionIntake
  readonly contactStatuses: ContactStatusIntake
  readonly phone: PhoneSync | null
  readonly retries: StatusRetries

  constructor (deps: ConnectionDeps) {
    const { receiptSink: views, interactionSink: answers } = deps
    this.receipts = new ReceiptIntake({
      sessionId: deps.sessionId,
      // LIDs the platform maps later reach viewers, reactions and replies alike
      sink: {
        commit: (sessionId, seen, deliveries) => views.commit(sessionId, seen, deliveries),
        takesDeliveries: views.takesDeliveries,
        // done when both are
        lidsMapped: async (sessionId, mappings) => {
          await Promise.all([views.lidsMapped(sessionId, mappings), answers.lidsMapped(sessionId, mappings)])
        },
        unmappedLids: async (sessionId, limit) => {
          const [x, y] = await Promise.all([views.unmappedLids(sessionId, limit), answers.unmappedLids(sessionId, limit)])
          return [...new Set([...x, ...y])].slice(0, limit)
        }
      },
      seen: (receipts) => { if (deps.live()) deps.onReceiptsSeen(receipts) },
      numberForLid: (lidUser) => deps.auth.numberForLid(lidUser),
      me: () => deps.auth.state.creds.me,
      live: deps.live,
      lookupIntervalMs: deps.timing.lidLookupIntervalMs,
      burstGcQuietMs: deps.timing.burstGcQuietMs,
      logger: deps.log
    })
    this.interactions = new InteractionIntake({
      sessionId: deps.sessionId,
      sink: answers,
      numberForLid: (lidUser) => this.receipts.numberForLid(lidUser),
      me: () => deps.auth.state.creds.me,
      live: deps.live,
      logger: deps.log,
      statusSecret: async (statusId) => (await deps.sender.storedMessage(statusId))?.messageContextInfo?.messageSecret ?? null
    })
    const numberForLid = (lidUser: string): string | null => this.receipts.numberForLid(lidUser)
    this.contactStatuses = new ContactStatusIntake({ sessionId: deps.sessionId, sink: deps.contactStatusSink, numberForLid, live: deps.live, logger: deps.log })
    this.phone = deps.phoneSink === undefined
      ? null
      : new PhoneSync({
          sessionId: deps.sessionId, sink: deps.phoneSink, log: deps.log, numberForLid: (lidUser) => deps.auth.numberForLid(lidUser), live: deps.live
        })
    this.retries = new StatusRetries({
      sessionId: deps.sessionId,
      log: deps.log,
      live: deps.live,
      message: async (id) => await deps.sender.storedMessage(id),
      exclusive: async (task) => await deps.sender.exclusive(task),
      ackTimeoutMs: () => deps.timing.sendAckTimeoutMs,
      onRetry: deps.onStatusRetry
    })
  }

  listen (sock: WASocket): void {
    this.receipts.listen(sock)
    this.retries.listen(sock)
    this.interactions.listen(sock)
    this.contactStatuses.listen(sock)
    this.phone?.listen(sock)
  }
}
