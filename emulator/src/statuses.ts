/**
 * Statuses as the recipients see them: every `<message to="status@broadcast">` is decrypted for each
 * addressed device the emulator holds keys for (pkmsg/msg → sender key distribution message →
 * skmsg), then recorded per message id (several stanzas with one id are merged as chunks).
 */
import { createHash } from 'node:crypto'
import {
  jidDecode,
  jidEncode,
  normalizeMessageContent,
  proto,
  type BinaryNode,
  type JidServer,
  type MediaType
} from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import { signalNameOf, type Account, type Directory, type Party } from './accounts.js'
import { EmulatorError } from './errors.js'
import { MediaServer } from './media-server.js'
import { decryptSenderKeyMessage, signalSenderFor, type SignalSender, type SimulatedDevice } from './signal-party.js'
import { expectedMediaType, kindFromStanza, kindOfContent, kindRuleBroken, readStanza, RULE_ERROR, stanzaRuleBroken, type RuleBreak, type StanzaShape, type StanzaTarget } from './status-rules.js'
import type { RejectedMessage, StatusDelivery, StatusKind, StatusMedia, StatusRecord, StatusStanza, StatusType } from './types.js'

const STATUS_JID = 'status@broadcast'
/** Yield to the event loop every this many device decryptions so acks/receipts keep flowing. */
const YIELD_EVERY = 20

interface StatusState {
  record: StatusRecord
  /** `${number}:${device}` addressed so far, to spot devices that got the status twice */
  addressed: Set<string>
  recipients: Set<string>
  audience: Set<string>
  contentDigest?: string
}

/** The server's answer to one stanza: undefined = accepted, else the rule it broke (NACK 479). */
export type Verdict = (broken: RuleBreak | undefined) => void

/** What was decided for one stanza (once; whoever knows first: the stanza, the peek or the queue). */
interface Decision {
  decided: boolean
  kind?: StatusKind
  broken?: RuleBreak
}

interface FanoutTarget {
  jid: string
  deviceId: number
  enc?: BinaryNode
  party?: Party
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
    stanzas: record.stanzas.map((st) => ({ ...st, attrs: { ...st.attrs }, audience: [...st.audience], devices: [...st.devices], skdmDevices: [...st.skdmDevices] })),
    audience: [...record.audience],
    skdmDevices: [...record.skdmDevices],
    rejected: record.rejected ? { ...record.rejected } : undefined,
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
  /** stanzas NACKed under the rules (status-rules.ts) */
  readonly rejected: RejectedMessage[] = []
  /** per poster device (`number:device`): the last sender key distribution message any device decrypted */
  private readonly lastSenderKey = new Map<string, Buffer>()

  constructor (
    private readonly directory: Directory,
    private readonly media: MediaServer,
    private readonly logger: Logger
  ) {}

  /**
   * Queue a status stanza: the rules are checked (status-rules.ts) and `verdict` is called exactly once,
   * as soon as the answer is known: at once for what the stanza shows; else from its content, read with
   * the poster's sender key as last seen (the server's peek, not waiting for the queue), or failing that
   * after the first device decrypted it in the queue. Then every audience device decrypts it, in order.
   */
  enqueue (account: Account, deviceId: number, node: BinaryNode, arrivedAt: Date, verdict: Verdict): void {
    this.pending++
    const shape = readStanza(node)
    const decision: Decision = { decided: false }
    const decide = (kind: StatusKind, broken: RuleBreak | undefined) => {
      if (decision.decided) return
      Object.assign(decision, { decided: true, kind, broken })
      verdict(broken)
    }
    const shown = kindFromStanza(shape)
    const stanzaBroken = stanzaRuleBroken(shape, account)
    if (stanzaBroken) decide(shown ?? 'post', stanzaBroken)
    else if (shown) decide(shown, kindRuleBroken(shape, account, shown))
    else this.peek(account, deviceId, shape, decide)
    this.queue = this.queue.then(async () => {
      try {
        await this.process(account, deviceId, shape, arrivedAt, decision, decide)
      } catch (error) {
        this.logger.error({ id: node.attrs.id, err: (error as Error).message }, 'status processing failed')
      } finally {
        decide('post', undefined)
        this.pending--
        if (this.pending === 0) {
          for (const resolve of this.idleWaiters) resolve()
          this.idleWaiters.clear()
        }
      }
    })
  }

  /** Read the skmsg with the last sender key seen from this device (stateless); the queue decides if this fails. */
  private peek (account: Account, deviceId: number, shape: StanzaShape, decide: (kind: StatusKind, broken: RuleBreak | undefined) => void): void {
    const skdm = this.lastSenderKey.get(`${account.number}:${deviceId}`)
    const skmsg = shape.skmsg?.content
    if (!skdm || !(skmsg instanceof Uint8Array)) return
    const name = signalNameOf(account)
    decryptSenderKeyMessage(STATUS_JID, signalSenderFor(name.user, name.server, deviceId), skdm, skmsg).then(
      (message) => {
        const kind = kindOfContent(normalizeMessageContent(message))
        decide(kind, kindRuleBroken(shape, account, kind))
      },
      () => undefined
    )
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

  private async process (
    account: Account,
    deviceId: number,
    shape: StanzaShape,
    arrivedAt: Date,
    decision: Decision,
    decide: (kind: StatusKind, broken: RuleBreak | undefined) => void
  ): Promise<void> {
    const id = shape.attrs.id
    const name = signalNameOf(account)
    const sender = signalSenderFor(name.user, name.server, deviceId)
    const existing = this.states.get(id)
    const chunk = (existing?.record.chunks ?? 0) + 1
    const stanza: StatusStanza = {
      chunk,
      receivedAt: arrivedAt.toISOString(),
      attrs: shape.attrs,
      audience: shape.bare.map((t) => t.jid),
      devices: shape.devices.map((t) => t.jid),
      skdmDevices: shape.devices.filter((t) => t.enc).map((t) => t.jid),
      statusSetting: shape.statusSetting,
      ...(shape.mediatype !== undefined ? { mediatype: shape.mediatype } : {}),
      deviceIdentity: shape.deviceIdentity,
      accepted: false
    }

    const deliveries: StatusDelivery[] = []
    const messages: proto.Message[] = []
    const errors: string[] = []
    /** deliveries whose Signal message repeats a counter the device already used (see the merge below) */
    const repeats = new Set<StatusDelivery>()
    /** sender keys learnt from this stanza: kept by the devices only if the server accepted it */
    const learnt: { device: SimulatedDevice, skdm: Uint8Array }[] = []
    if (!decision.broken) {
      const fanout = this.fanout(account, deviceId, shape)
      let count = 0
      for (const target of fanout) {
        if (++count % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve))
        if (decision.broken) break
        const result = await this.decryptFor(target, sender, shape.skmsg, chunk)
        deliveries.push(result.delivery)
        if (result.oldCounter) repeats.add(result.delivery)
        if (result.skdm) {
          learnt.push(result.skdm)
          this.lastSenderKey.set(`${account.number}:${deviceId}`, Buffer.from(result.skdm.skdm))
        }
        if (!result.message) continue
        messages.push(result.message)
        // the content tells a post from a revoke (WA Web's revoke stanza looks like a post: see kindFromStanza)
        const kind = kindOfContent(normalizeMessageContent(result.message))
        decide(kind, kindRuleBroken(shape, account, kind))
        if (decision.broken) break
      }
      if (!fanout.length) errors.push(`chunk ${chunk}: no audience (no <to> in <participants>)`)
    }
    // nobody could read it: what the stanza shows decides (a post unless it says otherwise)
    decide('post', kindRuleBroken(shape, account, 'post'))
    const kind = decision.kind ?? 'post'
    const broken = decision.broken

    if (broken) {
      stanza.error = RULE_ERROR
      stanza.rule = broken.rule
      stanza.detail = broken.detail
      this.rejected.push({ id, from: account.number, to: STATUS_JID, error: RULE_ERROR, at: arrivedAt.toISOString(), rule: broken.rule, detail: broken.detail, kind })
      this.logger.info({ id, number: account.number, rule: broken.rule }, 'status stanza NACKed 479')
      if (kind === 'revoke') return
      const state = existing ?? this.newState(id, account, deviceId, kind, arrivedAt)
      state.record.chunks = chunk
      state.record.stanzas.push(stanza)
      state.record.rejected ??= { error: RULE_ERROR, rule: broken.rule, detail: broken.detail, chunk }
      this.notify(state.record)
      return
    }
    stanza.accepted = true
    for (const { device, skdm } of learnt) device.rememberSenderKey(STATUS_JID, sender, skdm)

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

    const state = existing ?? this.newState(id, account, deviceId, kind, arrivedAt)
    const { record } = state
    record.chunks = chunk
    record.stanzas.push(stanza)
    record.errors.push(...errors)
    if (!record.statusSetting && stanza.statusSetting) record.statusSetting = stanza.statusSetting
    for (const jid of stanza.skdmDevices) {
      if (!record.skdmDevices.includes(jid)) record.skdmDevices.push(jid)
    }
    for (const t of [...shape.bare, ...shape.devices]) {
      const user = `${t.user}@${t.server}`
      if (!state.audience.has(user)) {
        state.audience.add(user)
        record.audience.push(user)
      }
    }
    for (const delivery of deliveries) {
      record.deliveries.push(delivery)
      const key = `${delivery.number}:${delivery.device}`
      const again = state.addressed.has(key)
      if (repeats.has(delivery) && record.deliveries.some((d) => d.decrypted && d.number === delivery.number && d.device === delivery.device)) {
        // A device that decrypted this id before and gets it again under a Signal counter it already used (a
        // sender that lost its session state after sending, e.g. killed before its key store committed) drops
        // the copy and sends no retry receipt: whatsmeow's message.go ignores signalerror.ErrOldCounter
        // ("Ignoring message"), and Baileys rc14's messages-recv.js acks MISSING_KEYS_ERROR_TEXT ('Key used
        // already or never filled') without a retry. A device that never had this id: an error, it is lost.
        delivery.dropped = delivery.error
        delete delivery.error
      }
      if (delivery.error) record.errors.push(`${delivery.jid}: ${delivery.error}`)
      if (again) {
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

  private newState (id: string, account: Account, deviceId: number, kind: StatusKind, arrivedAt: Date): StatusState {
    const state: StatusState = {
      record: {
        id,
        from: account.number,
        fromDevice: deviceId,
        kind: kind === 'reaction' ? 'reaction' : 'post',
        type: 'other',
        recipients: [],
        deliveries: [],
        receivedAt: arrivedAt.toISOString(),
        chunks: 0,
        duplicateRecipients: [],
        decrypted: false,
        errors: [],
        stanzas: [],
        audience: [],
        skdmDevices: []
      },
      addressed: new Set(),
      recipients: new Set(),
      audience: new Set()
    }
    this.states.set(id, state)
    return state
  }

  /**
   * Every device the server delivers the skmsg to: all devices of every audience user (bare `<to>`
   * users plus users of device-level `<to>`s), the poster's own other devices included (its phone
   * shows the post under "My status"), except the device that sent it. Device-level `<to>`s of
   * devices that do not exist are listed too (as errors). Order: as the users first appear.
   */
  private fanout (poster: Account, sendingDevice: number, shape: StanzaShape): FanoutTarget[] {
    const targets: FanoutTarget[] = []
    const seen = new Set<string>()
    const addressed = new Map<string, StanzaTarget>()
    for (const t of shape.devices) addressed.set(`${t.user}@${t.server}:${t.device ?? 0}`, t)
    for (const t of [...shape.bare, ...shape.devices]) {
      const userKey = `${t.user}@${t.server}`
      if (seen.has(userKey)) continue
      seen.add(userKey)
      const party = this.directory.resolveUser(t.user, t.server)
      if (!party) {
        for (const d of shape.devices.filter((x) => `${x.user}@${x.server}` === userKey)) targets.push({ jid: d.jid, deviceId: d.device ?? 0, enc: d.enc })
        if (!shape.devices.some((x) => `${x.user}@${x.server}` === userKey)) targets.push({ jid: t.jid, deviceId: 0 })
        continue
      }
      const ids = party.deviceList().map((d) => d.id).filter((d) => !(party === poster && d === sendingDevice))
      for (const deviceId of ids) {
        const to = addressed.get(`${userKey}:${deviceId}`)
        targets.push({ jid: to?.jid ?? jidEncode(t.user, t.server as JidServer, deviceId), deviceId, enc: to?.enc, party })
      }
      // device-level <to>s for devices the user does not have; one for the sending device itself (rc14
      // addresses it when the own LID is in statusJidList) is left out like the server leaves it out
      for (const d of shape.devices) {
        const deviceId = d.device ?? 0
        if (`${d.user}@${d.server}` !== userKey || ids.includes(deviceId) || (party === poster && deviceId === sendingDevice)) continue
        targets.push({ jid: d.jid, deviceId, enc: d.enc, party })
      }
    }
    return targets
  }

  private async decryptFor (
    target: FanoutTarget,
    sender: SignalSender,
    skmsg: BinaryNode | undefined,
    chunk: number
  ): Promise<{ delivery: StatusDelivery, message?: proto.Message, skdm?: { device: SimulatedDevice, skdm: Uint8Array }, oldCounter?: boolean }> {
    const { jid, deviceId, enc, party } = target
    const delivery: StatusDelivery = {
      number: party?.number ?? jidDecode(jid)?.user ?? jid,
      device: deviceId,
      jid,
      chunk,
      encType: enc?.attrs.type ?? 'none',
      skdm: false,
      decrypted: false
    }
    const resolved = party ? this.directory.resolveDevice(party.number, 's.whatsapp.net', deviceId) : undefined
    if (!resolved) {
      delivery.error = party ? 'addressed device does not exist' : 'addressed user does not exist'
      return { delivery }
    }
    if (!resolved.simulated) {
      // a linked companion (e.g. another client under test): its private keys are not ours
      delivery.error = 'linked companion device, not decryptable by the emulator'
      return { delivery }
    }
    const device = resolved.simulated
    const type = enc?.attrs.type
    if (enc && (!(enc.content instanceof Uint8Array) || (type !== 'pkmsg' && type !== 'msg'))) {
      delivery.error = `unexpected <enc type=${type ?? '?'}>`
      return { delivery }
    }
    try {
      let direct: proto.Message | undefined
      let learnt: Uint8Array | undefined
      if (enc) {
        direct = await device.decrypt(sender, type as 'pkmsg' | 'msg', enc.content as Uint8Array)
        const distribution = direct.senderKeyDistributionMessage
        if (distribution?.axolotlSenderKeyDistributionMessage?.length) {
          learnt = distribution.axolotlSenderKeyDistributionMessage
          delivery.skdm = true
        }
      }
      let message = direct
      if (skmsg) {
        // a device decrypts the skmsg only with a sender key it holds: from this stanza's SKDM or an earlier one
        const skdm = learnt ?? device.senderKeyFor(STATUS_JID, sender)
        if (!skdm) throw new Error('no sender key: no SKDM for this device in this or an earlier post')
        if (!(skmsg.content instanceof Uint8Array)) throw new Error('empty skmsg')
        message = await decryptSenderKeyMessage(STATUS_JID, sender, skdm, skmsg.content)
      }
      if (!message) throw new Error('nothing for this device (no <enc> and no skmsg)')
      delivery.decrypted = true
      return { delivery, message, skdm: learnt ? { device, skdm: learnt } : undefined }
    } catch (error) {
      delivery.error = `decrypt failed: ${(error as Error).message}`
      // libsignal's MessageCounterError: a message key of this session's chain already used
      return { delivery, oldCounter: (error as Error).name === 'MessageCounterError' }
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
    } else if (content.audioMessage) {
      // a voice note (ptt) or other audio: what a recipient plays, decrypted like image and video
      type = 'audio'
      const audio = content.audioMessage
      record.media = { ...await this.describeMedia(audio, 'audio', record), ptt: audio.ptt === true, ...(audio.seconds != null ? { seconds: audio.seconds } : {}) }
    }
    record.type = type
    // the mediatype the stanza announced must be the one WA Web gives this content (status-rules.ts expectedMediaType)
    const expected = expectedMediaType(content)
    const announced = record.stanzas.find((st) => st.accepted)?.mediatype
    if (expected !== undefined && announced !== expected) record.errors.push(`media: <enc mediatype="${announced ?? ''}"> for content WA Web sends as "${expected}"`)
  }

  private async describeMedia (
    message: proto.Message.IImageMessage | proto.Message.IVideoMessage | proto.Message.IAudioMessage,
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
