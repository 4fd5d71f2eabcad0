import { jidNormalizedUser, proto, type WAMessageUpdate, type WASocket } from '@whiskeysockets/baileys'
import { SerialQueue } from '../async.js'
import { PlatformError, isPlatformError } from '../errors.js'
import { pnJid, STATUS_JID } from '../../jid.js'
import { isLidUser, pnDigits, recipientJid } from '../lid.js'
import type { PlatformLogger as Logger } from '../logger.js'
import type { PlatformTiming, SendStatusInput, SendStatusResult, SentStatusStore, StatusSetting } from '../types.js'
import { messageOf, type Emit } from './linking.js'
import { buildStatusMessage, revokeMessage } from './status-message.js'

import { chunk, relayInChunks, StanzaRefused, withPushBackRetry, type ChunkWriter, type RelayPolicy } from './chunk-relay.js'
import { lidsForNumbers, ownLidOf, STATUS_SETTING, writeLidStatusChunk } from '../baileys/status-post.js'
import { prepareSessions, type SessionPrep } from '../baileys/status-prepare.js'
import { sendStatusMentions } from '../baileys/status-mention.js'

// Statuses go to `status@broadcast` as one sender-key message (skmsg) plus, per recipient device, a
// pairwise-encrypted sender-key distribution message. In rc14 relayMessage (lib/Socket/messages-send.js,
// the isGroupOrStatus branch) never reads `sender-key-memory` for status@broadcast, so EVERY call sends
// the distribution message to every device of the `statusJidList` it is given. Relaying a large list in
// chunks under one message id therefore reaches each device exactly once per chunk, as long as no JID
// appears twice in a chunk or in two chunks (a duplicate JID would be encrypted for twice): the list is
// de-duplicated before chunking. No `broadcast` attribute or other option is needed for status in rc14.
// That is the path of a legacy (phone-number only) account. An LID-migrated account (its LID in
// creds.me.lid) posts the way WA Web does instead (../baileys/status-post.ts): recipients mapped to LIDs,
// the sender key reused and distributed only to devices lacking it. The chunks still carry phone-number
// JIDs to the caller (what it commits and revokes); each chunk's writer maps them to LIDs.

const SENT_CACHE_SIZE = 64

export interface SenderHost {
  readonly id: string
  readonly log: Logger
  policy: () => RelayPolicy
  /** an open socket (other than `lost` unless that one is still open); waits for a reconnect, fails with NOT_CONNECTED when none comes */
  openSocket: (lost?: WASocket) => Promise<WASocket>
  ownNumber: () => string | null
  newMessageId: () => string
  emit: Emit
  /** the statuses' stored messages, for retry receipts of statuses no longer in memory (see SentStatusStore) */
  sentStatuses: SentStatusStore | undefined
}

/** The relay policy of a session's sends: its chunk size setting and the platform's send timings. */
export function relayPolicy (chunkSize: number, timing: PlatformTiming, statusStanza: 'message' | 'status' = 'message'): RelayPolicy {
  return {
    chunkSize, attempts: timing.sendAttempts, retryBaseMs: timing.sendRetryBaseMs, retryMaxMs: timing.sendRetryMaxMs, ackTimeoutMs: timing.sendAckTimeoutMs,
    statusStanza
  }
}

/**
 * Sends and revokes one session's statuses, one at a time. Each chunk picks up whatever socket is open
 * then, so a reconnect in the middle of a large send does not fail it.
 */
export class StatusSender {
  readonly #queue = new SerialQueue()
  /** status messages we sent recently: served to retry receipts, and matched by bad acks */
  readonly #sent = new Map<string, proto.IMessage>()

  constructor (private readonly host: SenderHost) {}

  sentMessage (id: string): proto.IMessage | undefined {
    return this.#sent.get(id)
  }

  /**
   * Runs `task` between this session's sends and revokes, never beside one: an answer to a retry receipt goes out
   * under the id of a status whose chunks may still be waiting for their acks (all under that id).
   */
  async exclusive<T> (task: () => Promise<T>): Promise<T> {
    return await this.#queue.run(task)
  }

  /** A status we sent under this id: kept in memory, else as the service stored it; undefined when neither has it. */
  async storedMessage (id: string): Promise<proto.IMessage | undefined> {
    const store = this.host.sentStatuses
    const recent = this.#sent.get(id)
    if (recent !== undefined || store === undefined) return recent
    const payload = await store.payload(this.host.id, id)
    if (payload === null) return undefined
    try {
      return proto.Message.decode(payload)
    } catch (err) {
      this.host.log.warn({ err, messageId: id }, 'stored status message unreadable')
      return undefined
    }
  }

  async send (input: SendStatusInput): Promise<SendStatusResult> {
    return await this.#queue.run(async () => {
      const { log } = this.host
      const policy = this.host.policy()
      const first = await this.host.openSocket()
      const own = this.host.ownNumber() ?? pnDigits(first.user?.id)
      if (own === null) throw new PlatformError('NOT_CONNECTED')
      const recipients = [...new Set(input.recipients)].filter((digits) => digits !== own)
      let all = [pnJid(own), ...recipients.map(recipientJid)]
      const message = await this.#message(input, first, policy)
      this.#remember(input.messageId, message)
      const lids = await this.#audienceLids(first, own, all, policy)
      // without a LID (LID-migrated account), or known only by one (a legacy account posts by phone number)
      const unreachable = recipients.filter((r) => lids === null ? isLidUser(r) : !lids.has(recipientJid(r)))
      if (unreachable.length > 0) {
        const gone = new Set(unreachable.map(recipientJid))
        all = all.filter((jid) => !gone.has(jid))
        log.warn({ messageId: input.messageId, unreachable: unreachable.length }, 'recipients without a LID (or only a LID, on a legacy account) are not sent to')
        await input.onUnreachable?.(unreachable)
      }
      const done = new Set(input.done ?? [])
      const jids = all.filter((jid) => !done.has(jid))
      // a long list: devices and sessions prepared ahead, batch by batch alongside the chunks (status-prepare.ts)
      const prep = jids.length > policy.chunkSize
        ? await prepareSessions(first, chunk(lids === null ? jids : jids.map((j) => lids.get(j) ?? j), policy.chunkSize), lids !== null, log)
            .catch(() => undefined)
        : undefined
      // relayMessage (the phone-number path) would repeat the look-ups the preparation has in flight
      if (lids === null) await prep?.ready(jids)
      // the users it mentions, as the platform addresses them (status-mention.ts): LIDs, or numbers on a legacy account
      const mentioned = (input.mentions ?? []).flatMap((d) => lids === null ? [pnJid(d)] : lids.get(pnJid(d)) ?? [])
      const write = lids === null ? undefined : this.#lidWriter(message, input.messageId, lids, input.statusSetting ?? STATUS_SETTING, policy, prep, mentioned)
      try {
        await relayInChunks({
          socket: this.host.openSocket,
          message,
          messageId: input.messageId,
          jids,
          policy,
          logger: log,
          alreadySent: all.length - jids.length,
          ...(write !== undefined ? { write, ackClass: policy.statusStanza ?? 'message' } : {}),
          ...(input.onChunkStart !== undefined ? { onChunkStart: input.onChunkStart } : {}),
          ...(input.onChunk !== undefined ? { onChunk: input.onChunk } : {}),
          ...(input.onUnconfirmed !== undefined ? { onUnconfirmed: input.onUnconfirmed } : {})
        })
      } catch (err) {
        if (isPlatformError(err)) throw err
        throw new PlatformError('SEND_FAILED', messageOf(err))
      }
      log.info({ messageId: input.messageId, recipients: all.length, resumed: all.length - jids.length, kind: input.content?.kind }, 'status sent')
      const told = mentioned.length === 0 ? [] : await sendStatusMentions(await this.host.openSocket(), input.messageId, mentioned, log)
      const back = new Map([...(lids ?? new Map<string, string>())].map(([pn, lid]) => [lid, pn]))
      const toldNumbers = told.flatMap((jid) => pnDigits(back.get(jid) ?? jid) ?? [])
      return { messageId: input.messageId, recipientJids: all, unreachable, ...(mentioned.length > 0 ? { mentioned: toldNumbers } : {}) }
    })
  }

  /**
   * An LID-migrated account: phone-number JID → LID user JID for the audience (the own number → the own
   * LID, a LID → itself), numbers without a LID left out. null for a legacy account (the phone-number path).
   */
  async #audienceLids (sock: WASocket, own: string, pnJids: string[], policy: RelayPolicy): Promise<Map<string, string> | null> {
    const meLid = ownLidOf(sock)
    if (meLid === null) return null
    const others = pnJids.filter((jid) => jid !== pnJid(own) && !isLidUser(jid))
    try {
      const lids = await withPushBackRetry({ policy, logger: this.host.log, what: 'LID look-up' }, async (attempt) => {
        return await lidsForNumbers(attempt === 0 ? sock : await this.host.openSocket(), others)
      })
      lids.set(pnJid(own), jidNormalizedUser(meLid))
      // a contact known only by its LID is addressed by it
      for (const jid of pnJids) if (isLidUser(jid)) lids.set(jid, jid)
      return lids
    } catch (err) {
      if (isPlatformError(err)) throw err
      throw new PlatformError('SEND_FAILED', `looking up recipients' LIDs failed: ${messageOf(err)}`)
    }
  }

  /** `statusSetting`: a post's `<meta status_setting>`; null: a revoke (none) */
  #lidWriter (
    message: proto.IMessage, messageId: string, lids: Map<string, string>, statusSetting: StatusSetting | null, policy: RelayPolicy,
    prep?: SessionPrep, mentioned?: string[]
  ): ChunkWriter {
    const stanza = policy.statusStanza ?? 'message'
    return async (sock, jids) => {
      const users = jids.flatMap((jid) => lids.get(jid) ?? [])
      await prep?.ready(users)
      const mentions = mentioned !== undefined ? { mentioned } : {}
      return await writeLidStatusChunk(sock, { message, messageId, users, statusSetting, stanza, logger: this.host.log, ...mentions })
    }
  }

  /** The message to relay: the stored one of an earlier attempt, or a fresh one (media uploaded) handed to onPrepared. */
  async #message (input: SendStatusInput, first: WASocket, policy: RelayPolicy): Promise<proto.IMessage> {
    if (input.prepared !== undefined) {
      try {
        return proto.Message.decode(input.prepared)
      } catch (err) {
        throw new PlatformError('SEND_FAILED', `stored message unreadable: ${messageOf(err)}`)
      }
    }
    const content = input.content
    if (content === undefined) throw new PlatformError('SEND_FAILED', 'nothing to send')
    let message: proto.IMessage
    try {
      message = await withPushBackRetry({ policy, logger: this.host.log, what: 'status media upload' }, async (attempt) => {
        const sock = attempt === 0 ? first : await this.host.openSocket()
        return await buildStatusMessage(content, sock.waUploadToServer, this.host.log)
      })
    } catch (err) {
      if (isPlatformError(err)) throw err
      throw new PlatformError('SEND_FAILED', messageOf(err))
    }
    await input.onPrepared?.(proto.Message.encode(message).finish())
    return message
  }

  /**
   * Revokes a status for the JIDs it went to: true once every chunk was acked without an error; false when
   * the platform could not be told. A chunk the platform refused (an error ack, push-back waited out first)
   * throws SEND_FAILED naming the code and how far the revoke got.
   */
  async revoke (messageId: string, recipientJids: string[]): Promise<boolean> {
    return await this.#queue.run(async () => {
      let jids = [...new Set(recipientJids.map((j) => jidNormalizedUser(j)))]
      if (jids.length === 0) return false
      const revokeId = this.host.newMessageId()
      const message = revokeMessage(messageId)
      this.#remember(revokeId, message)
      const policy = this.host.policy()
      let reached = 0
      try {
        // an LID-migrated account: the same audience (their LIDs, stored since the post), no <meta>,
        // no edit attribute (whatsapp-rust Status::revoke); a legacy one: edit="7" as Baileys' sendMessage({ delete })
        const sock = await this.host.openSocket()
        const own = this.host.ownNumber() ?? pnDigits(sock.user?.id)
        const lids = own === null ? null : await this.#audienceLids(sock, own, jids, policy)
        if (lids !== null) jids = jids.filter((jid) => lids.has(jid))
        await relayInChunks({
          socket: this.host.openSocket,
          message,
          messageId: revokeId,
          jids,
          policy,
          logger: this.host.log,
          label: 'revoke',
          onChunk: async (done) => { reached += done.length },
          ...(lids === null ? { additionalAttributes: { edit: '7' } } : { write: this.#lidWriter(message, revokeId, lids, null, policy), ackClass: policy.statusStanza ?? 'message' })
        })
        return true
      } catch (err) {
        this.host.log.warn({ err, messageId }, 'could not revoke status')
        if (err instanceof StanzaRefused) throw new PlatformError('SEND_FAILED', `${err.message}; the revoke reached ${reached} of ${jids.length} recipient${jids.length === 1 ? '' : 's'}`)
        return false
      }
    })
  }

  /**
   * Error acks of statuses (rc14's handleBadAck reports them as messages.update ERROR, e.g. 479). One
   * for a status or revoke this sender relayed was met by its relay (chunk-relay.ts: waited out and sent
   * again, or the chunk failed and the send says so): `inSend`. Others (a status of an earlier run)
   * are rejections reported after the status was written.
   */
  onMessagesUpdate (updates: WAMessageUpdate[]): void {
    for (const { key, update } of updates) {
      if (update.status !== proto.WebMessageInfo.Status.ERROR || key.fromMe !== true || key.id == null) continue
      const inSend = this.#sent.has(key.id)
      if (key.remoteJid !== STATUS_JID && !inSend) continue
      const error = update.messageStubParameters?.[0] ?? 'unknown error'
      this.host.log.warn({ messageId: key.id, error, inSend }, 'platform refused a status stanza')
      this.host.emit('status-error', { sessionId: this.host.id, messageId: key.id, error, ...(inSend ? { inSend: true as const } : {}) })
    }
  }

  #remember (id: string, message: proto.IMessage): void {
    this.#sent.set(id, message)
    if (this.#sent.size > SENT_CACHE_SIZE) {
      const oldest = this.#sent.keys().next().value
      if (oldest !== undefined) this.#sent.delete(oldest)
    }
  }
}
