import type { BinaryNode, proto, WASocket } from '@whiskeysockets/baileys'
import { SerialQueue } from '../async.js'
import { ackStanza, holdFrame, onFrame, releaseFrame } from '../baileys/index.js'
import { ownLidOf } from '../baileys/status-post.js'
import {
  isSendingDevice,
  MAX_STATUS_RETRY_COUNT,
  prepareStatusRetry,
  statusRetryDevice,
  statusRetryOf,
  writeStatusRetry,
  type StatusRetryRequest
} from '../baileys/status-retry.js'
import type { PlatformLogger as Logger } from '../logger.js'
import type { StatusRetryOutcome, StatusRetrySeen } from '../types.js'
import { messageOf } from './linking.js'
import { awaitAck } from './chunk-relay.js'

// Retry receipts for our statuses, answered the WA Web way (baileys/status-retry.ts has the rule and its
// sources). The receipt is held back from rc14 (whose sendMessagesAgain would re-relay the status pairwise to
// the device's own JID) the way receipts.ts holds views: renamed in the 'frame' listener, before Baileys sees
// it. It is acknowledged with Baileys' own ack once it was answered (or could not be): a crash before that
// leaves it unacknowledged, and the platform delivers it again at the next login.
// An LID-migrated account only: a legacy account's statuses go through rc14, and so do their retries.

/** (message, device) pairs remembered with their answer count; the oldest forgotten beyond this */
const ANSWERED_LIMIT = 10_000

export interface StatusRetryHost {
  readonly sessionId: string
  readonly log: Logger
  live: () => boolean
  /** the status message we sent under this id (kept in memory, else as the service stored it), if any */
  message: (id: string) => Promise<proto.IMessage | undefined>
  /**
   * runs the answer between the session's sends, never beside one: it goes out under the id of a status whose
   * chunks may still wait for their acks (an ack is matched by id)
   */
  exclusive: <T>(task: () => Promise<T>) => Promise<T>
  /** how long the answer waits for the platform's ack */
  ackTimeoutMs: () => number
  /** every retry receipt taken, with what was done about it */
  onRetry: (seen: StatusRetrySeen) => void
}

export class StatusRetries {
  readonly #queue = new SerialQueue()
  /** `${messageId}|${device}` → answers sent (bounded by MAX_STATUS_RETRY_COUNT) */
  readonly #answered = new Map<string, number>()

  constructor (private readonly host: StatusRetryHost) {}

  listen (sock: WASocket): void {
    onFrame(sock, (frame) => {
      if (frame.tag !== 'receipt' || !this.host.live() || ownLidOf(sock) === null) return
      const request = statusRetryOf(frame)
      if (request === null) return
      holdFrame(frame)
      void this.#queue.run(async () => { await this.#take(sock, frame, request) })
    })
  }

  async #take (sock: WASocket, frame: BinaryNode, request: StatusRetryRequest): Promise<void> {
    let seen: StatusRetrySeen
    try {
      seen = await this.host.exclusive(async () => await this.#answer(sock, frame, request))
    } catch (err) {
      seen = { ...this.#base(request), outcome: 'failed', error: messageOf(err) }
    }
    releaseFrame(frame, 'receipt')
    await ackStanza(sock, frame).catch((err: unknown) => { this.host.log.warn({ err, id: frame.attrs.id }, 'could not ack a status retry receipt') })
    const level = seen.outcome === 'answered' ? 'info' : 'warn'
    this.host.log[level]({ messageId: seen.messageId, requester: seen.requester, device: seen.device, count: seen.count, outcome: seen.outcome, error: seen.error }, 'status retry receipt')
    if (this.host.live()) this.host.onRetry(seen)
  }

  #base (request: StatusRetryRequest): Omit<StatusRetrySeen, 'outcome'> {
    return { sessionId: this.host.sessionId, messageId: request.messageId, requester: request.requester, device: request.requester, count: request.count }
  }

  async #answer (sock: WASocket, frame: BinaryNode, request: StatusRetryRequest): Promise<StatusRetrySeen> {
    const base = this.#base(request)
    const done = (outcome: StatusRetryOutcome, extra: Partial<StatusRetrySeen> = {}): StatusRetrySeen => ({ ...base, ...extra, outcome })
    if (request.count >= MAX_STATUS_RETRY_COUNT) return done('too-many')
    const device = await statusRetryDevice(sock, request.requester)
    base.device = device
    if (isSendingDevice(sock, device)) return done('sending-device')
    const key = `${request.messageId}|${device}`
    const answers = this.#answered.get(key) ?? 0
    if (answers >= MAX_STATUS_RETRY_COUNT) return done('too-many')
    // the device is marked as lacking the key before the message is looked up: the next post gives it the key
    if (!await prepareStatusRetry(sock, device, frame, this.host.log)) return done('bad-keys')
    const message = await this.host.message(request.messageId)
    if (message === undefined) return done('unknown-message')
    this.#count(key, answers + 1)
    const ack = awaitAck(sock, request.messageId, this.host.ackTimeoutMs())
    try {
      const written = await writeStatusRetry(sock, { message, messageId: request.messageId, device, logger: this.host.log })
      await ack.acked
      const error = ack.error()
      if (error !== undefined) return done('refused', { error })
      await written.accepted()
      return done('answered')
    } finally {
      ack.cancel()
    }
  }

  #count (key: string, answers: number): void {
    this.#answered.delete(key)
    this.#answered.set(key, answers)
    if (this.#answered.size > ANSWERED_LIMIT) this.#answered.delete(this.#answered.keys().next().value as string)
  }
}
