/**
 * Statuses as the recipients see them: every `<message to="status@broadcast">` is decrypted for each
 * addressed device the emulator holds keys for (pkmsg/msg → sender key distribution message →
 * skmsg), then recorded per message id (several stanzas with one id are merged as chunks).
 */
import { createHash } from 'node:crypto'
import {
  getBinaryNodeChild,
  getBinaryNodeChildren,
  jidDecode,
  normalizeMessageContent,
  proto,
  type BinaryNode,
  type MediaType
} from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import type { Account, Directory } from './accounts.js'
import { EmulatorError } from './errors.js'
import { MediaServer } from './media-server.js'
import { decryptSenderKeyMessage, signalSenderFor, type SignalSender } from './signal-party.js'
import type { StatusDelivery, StatusMedia, StatusRecord, StatusType } from './types.js'

const STATUS_JID = 'status@broadcast'
/** Yield to the event loop every this many device decryptions so acks/receipts keep flowing. */
const YIELD_EVERY = 20

interface StatusState {
  record: StatusRecord
  /** `${number}:${device}` addressed so far, to spot devices that got the status twice */
  addressed: Set<string>
  recipients: Set<string>
  contentDigest?: string
}

interface RevokeState {
  revokeId: string
  targetId: string
  recipients: Set<string>
}

interface Waiter {
  predicate: (status: StatusRecord) => boolean
  resolve: (status: StatusRecord) => void
  reject: (error: Error) => void
}

function b64 (data: Uint8Array | null | undefined): string {
  return data ? Buffer.from(data).toString('base64') : ''
}

function copy (record: StatusRecord): StatusRecord {
  return {
    ...record,
    media: record.media ? { ...record.media } : undefined,
    recipients: [...record.recipients],
    deliveries: record.deliveries.map((d) => ({ ...d })),
    duplicateRecipients: [...record.duplicateRecipients],
    errors: [...record.errors],
    revokedFor: record.revokedFor ? [...record.revokedFor] : undefined
  }
}

export class StatusCenter {
  private readonly states = new Map<string, StatusState>()
  private readonly revokes = new Map<string, RevokeState>()
  private queue: Promise<void> = Promise.resolve()
  private pending = 0
  private readonly waiters = new Set<Waiter>()
  private readonly idleWaiters = new Set<() => void>()

  constructor (
    private readonly directory: Directory,
    private readonly media: MediaServer,
    private readonly logger: Logger
  ) {}

  /** Queue decryption of a status stanza; the caller has acked it already. */
  enqueue (account: Account, deviceId: number, node: BinaryNode, arrivedAt: Date): void {
    this.pending++
    this.queue = this.queue.then(async () => {
      try {
        await this.process(account, deviceId, node, arrivedAt)
      } catch (error) {
        this.logger.error({ id: node.attrs.id, err: (error as Error).message }, 'status processing failed')
      } finally {
        this.pending--
        if (this.pending === 0) {
          for (const resolve of this.idleWaiters) resolve()
          this.idleWaiters.clear()
        }
      }
    })
  }

  list (): StatusRecord[] {
    return [...this.states.values()].map((s) => copy(s.record))
  }

  get (id: string): StatusRecord {
    const state = this.states.get(id)
    if (!state) throw new EmulatorError(404, `no status ${id}`)
    return copy(state.record)
  }

  has (id: string): boolean {
    return this.states.has(id)
  }

  waitFor (predicate: (status: StatusRecord) => boolean, timeoutMs: number): Promise<StatusRecord> {
    for (const state of this.states.values()) {
      if (predicate(state.record)) return Promise.resolve(copy(state.record))
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        predicate,
        resolve: (status) => {
          clearTimeout(timer)
          this.waiters.delete(waiter)
          resolve(copy(status))
        },
        reject: (error) => {
          clearTimeout(timer)
          reject(error)
        }
      }
      const timer = setTimeout(() => {
        this.waiters.delete(waiter)
        reject(new EmulatorError(504, `no matching status within ${timeoutMs} ms`))
      }, timeoutMs)
      this.waiters.add(waiter)
    })
  }

  /** Resolves once every queued stanza has been processed. */
  idle (timeoutMs: number): Promise<void> {
    if (this.pending === 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        this.idleWaiters.delete(done)
        reject(new EmulatorError(504, `status decryption still busy after ${timeoutMs} ms`))
      }, timeoutMs)
      this.idleWaiters.add(done)
    })
  }

  /** Release everyone waiting (the emulator is stopping). */
  close (): void {
    for (const resolve of this.idleWaiters) resolve()
    this.idleWaiters.clear()
    for (const waiter of this.waiters) waiter.reject(new EmulatorError(409, 'emulator stopped'))
    this.waiters.clear()
  }

  private notify (record: StatusRecord): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.predicate(record)) waiter.resolve(record)
    }
  }

  private async process (account: Account, deviceId: number, node: BinaryNode, arrivedAt: Date): Promise<void> {
    const id = node.attrs.id
    const sender = signalSenderFor(account.lid, 'lid', deviceId)
    const skmsg = getBinaryNodeChildren(node, 'enc').find((e) => e.attrs.type === 'skmsg')
    const targets = getBinaryNodeChildren(getBinaryNodeChild(node, 'participants'), 'to')
    const existing = this.states.get(id)
    const chunk = (existing?.record.chunks ?? 0) + 1
    const deliveries: StatusDelivery[] = []
    const messages: proto.Message[] = []
    const errors: string[] = []

    let count = 0
    for (const target of targets) {
      if (++count % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve))
      const delivery = await this.decryptFor(target, sender, skmsg, chunk)
      deliveries.push(delivery.delivery)
      if (delivery.message) messages.push(delivery.message)
    }
    if (!targets.length) errors.push(`chunk ${chunk}: no <participants>`)

    const content = normalizeMessageContent(messages[0])
    // messageContextInfo (messageSecret…) is per generated message; chunks re-sent under one id may differ there
    const digests = new Set(
      messages.map((m) => createHash('sha256').update(proto.Message.encode({ ...m, messageContextInfo: null }).finish()).digest('hex'))
    )
    if (digests.size > 1) errors.push(`chunk ${chunk}: recipients decrypted different contents`)

    const revokedKey = content?.protocolMessage?.type === proto.Message.ProtocolMessage.Type.REVOKE ? content.protocolMessage.key : undefined
    if (revokedKey?.id) {
      this.applyRevoke(id, revokedKey.id, deliveries, arrivedAt)
      return
    }

    let state = existing
    if (!state) {
      state = {
        record: {
          id,
          from: account.number,
          fromDevice: deviceId,
          type: 'other',
          recipients: [],
          deliveries: [],
          receivedAt: arrivedAt.toISOString(),
          chunks: 0,
          duplicateRecipients: [],
          decrypted: false,
          errors: []
        },
        addressed: new Set(),
        recipients: new Set()
      }
      this.states.set(id, state)
    }
    const { record } = state
    record.chunks = chunk
    record.errors.push(...errors)
    for (const delivery of deliveries) {
      record.deliveries.push(delivery)
      if (delivery.error) record.errors.push(`${delivery.jid}: ${delivery.error}`)
      const key = `${delivery.number}:${delivery.device}`
      if (state.addressed.has(key)) {
        if (!record.duplicateRecipients.includes(delivery.number)) record.duplicateRecipients.push(delivery.number)
      }
      state.addressed.add(key)
      if (!state.recipients.has(delivery.number)) {
        state.recipients.add(delivery.number)
        record.recipients.push(delivery.number)
      }
    }
    if (content) {
      const digest = [...digests][0]
      if (!state.contentDigest) {
        state.contentDigest = digest
        record.decrypted = true
        await this.describe(record, content)
      } else if (state.contentDigest !== digest) {
        record.errors.push(`chunk ${chunk}: content differs from the first chunk`)
      }
    }
    this.logger.debug({ id, chunk, recipients: record.recipients.length, type: record.type }, 'status recorded')
    this.notify(record)
    const pendingRevoke = [...this.revokes.values()].find((r) => r.targetId === id)
    if (pendingRevoke) this.markRevoked(record, pendingRevoke)
  }

  private async decryptFor (
    target: BinaryNode,
    sender: SignalSender,
    skmsg: BinaryNode | undefined,
    chunk: number
  ): Promise<{ delivery: StatusDelivery, message?: proto.Message }> {
    const jid = target.attrs.jid ?? ''
    const decoded = jidDecode(jid)
    const enc = getBinaryNodeChild(target, 'enc')
    const device = decoded?.device ?? 0
    const resolved = decoded ? this.directory.resolveDevice(decoded.user, decoded.server, device) : undefined
    const delivery: StatusDelivery = {
      number: resolved?.party.number ?? decoded?.user ?? jid,
      device,
      jid,
      chunk,
      encType: enc?.attrs.type ?? 'none',
      decrypted: false
    }
    if (!resolved) {
      delivery.error = 'addressed device does not exist'
      return { delivery }
    }
    if (!resolved.simulated) {
      // a linked companion (e.g. another client under test): its private keys are not ours
      delivery.error = 'linked companion device, not decryptable by the emulator'
      return { delivery }
    }
    const type = enc?.attrs.type
    if (!enc || !(enc.content instanceof Uint8Array) || (type !== 'pkmsg' && type !== 'msg')) {
      delivery.error = `unexpected <enc type=${type ?? '?'}>`
      return { delivery }
    }
    try {
      const direct = await resolved.simulated.decrypt(sender, type, enc.content)
      const distribution = direct.senderKeyDistributionMessage
      const groupId = distribution?.groupId || STATUS_JID
      let message: proto.Message = direct
      if (skmsg) {
        if (distribution?.axolotlSenderKeyDistributionMessage?.length) {
          resolved.simulated.rememberSenderKey(groupId, sender, distribution.axolotlSenderKeyDistributionMessage)
        }
        const skdm = resolved.simulated.senderKeyFor(groupId, sender)
        if (!skdm) throw new Error('skmsg without a sender key distribution message')
        if (!(skmsg.content instanceof Uint8Array)) throw new Error('empty skmsg')
        message = await decryptSenderKeyMessage(groupId, sender, skdm, skmsg.content)
      }
      delivery.decrypted = true
      return { delivery, message }
    } catch (error) {
      delivery.error = `decrypt failed: ${(error as Error).message}`
      return { delivery }
    }
  }

  private async describe (record: StatusRecord, content: proto.IMessage): Promise<void> {
    let type: StatusType = 'other'
    if (content.extendedTextMessage) {
      const ext = content.extendedTextMessage
      type = 'text'
      record.text = ext.text ?? ''
      if (ext.backgroundArgb !== null && ext.backgroundArgb !== undefined) record.backgroundArgb = ext.backgroundArgb >>> 0
      if (ext.font !== null && ext.font !== undefined) record.font = ext.font
    } else if (typeof content.conversation === 'string') {
      type = 'text'
      record.text = content.conversation
    } else if (content.imageMessage) {
      type = 'image'
      if (content.imageMessage.caption) record.caption = content.imageMessage.caption
      record.media = await this.describeMedia(content.imageMessage, 'image', record)
    } else if (content.videoMessage) {
      type = 'video'
      if (content.videoMessage.caption) record.caption = content.videoMessage.caption
      record.media = await this.describeMedia(content.videoMessage, 'video', record)
    }
    record.type = type
  }

  private async describeMedia (
    message: proto.Message.IImageMessage | proto.Message.IVideoMessage,
    mediaType: MediaType,
    record: StatusRecord
  ): Promise<StatusMedia> {
    const declared: StatusMedia = {
      mimetype: message.mimetype ?? '',
      size: Number(message.fileLength ?? 0),
      sha256: b64(message.fileSha256),
      uploaded: false,
      verified: false,
      directPath: message.directPath ?? undefined
    }
    const upload = this.media.find({ directPath: message.directPath, url: message.url, fileEncSha256: message.fileEncSha256 })
    if (!upload) {
      record.errors.push('media: upload not found on the media server')
      return declared
    }
    if (!message.mediaKey?.length) {
      record.errors.push('media: message carries no mediaKey')
      return declared
    }
    try {
      const { plaintext, macValid } = await MediaServer.decrypt(upload.body, message.mediaKey, mediaType)
      const sha256 = createHash('sha256').update(plaintext).digest('base64')
      const verified = macValid && sha256 === declared.sha256 && upload.encSha256 === b64(message.fileEncSha256)
      if (!verified) record.errors.push('media: MAC or hash mismatch')
      return { ...declared, size: plaintext.length, sha256, uploaded: true, verified }
    } catch (error) {
      record.errors.push(`media: decrypt failed: ${(error as Error).message}`)
      return declared
    }
  }

  private applyRevoke (revokeId: string, targetId: string, deliveries: StatusDelivery[], at: Date): void {
    let revoke = this.revokes.get(revokeId)
    if (!revoke) {
      revoke = { revokeId, targetId, recipients: new Set() }
      this.revokes.set(revokeId, revoke)
    }
    for (const d of deliveries) {
      if (d.decrypted) revoke.recipients.add(d.number)
    }
    const target = this.states.get(targetId)
    if (!target) {
      this.logger.warn({ revokeId, targetId }, 'revoke for a status the emulator has not seen (yet)')
      return
    }
    target.record.revokedAt ??= at.toISOString()
    this.markRevoked(target.record, revoke)
  }

  private markRevoked (record: StatusRecord, revoke: RevokeState): void {
    record.revoked = true
    record.revokedAt ??= new Date().toISOString()
    record.revokeMessageId = revoke.revokeId
    record.revokedFor = [...revoke.recipients]
    this.notify(record)
  }
}
