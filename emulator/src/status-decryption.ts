// StatusCenter, layer 2: the fan-out to the addressed devices and their decryption; the content described.
import { createHash } from 'node:crypto'
import { jidDecode, jidEncode, proto, type BinaryNode, type JidServer, type MediaType } from '@whiskeysockets/baileys'
import type { Account } from './accounts.js'
import { MediaServer } from './media-server.js'
import { decryptSenderKeyMessage, type SignalSender, type SimulatedDevice } from './signal-party.js'
import { expectedMediaType, type StanzaShape, type StanzaTarget } from './status-rules.js'
import type { StatusDelivery, StatusKind, StatusMedia, StatusRecord, StatusType } from './types.js'
import { STATUS_JID, b64, StatusBook, type StatusState, type FanoutTarget, type RetryAsk } from './status-book.js'

/** Each addressed device decrypting a status stanza (pkmsg/msg → SKDM → skmsg), and what the status shows. */
export abstract class StatusDecryption extends StatusBook {
  protected newState (id: string, account: Account, deviceId: number, kind: StatusKind, arrivedAt: Date): StatusState {
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
        skdmDevices: [],
        retries: []
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
  protected fanout (poster: Account, sendingDevice: number, shape: StanzaShape): FanoutTarget[] {
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

  protected async decryptFor (
    target: FanoutTarget,
    sender: SignalSender,
    skmsg: BinaryNode | undefined,
    chunk: number,
    statusId: string
  ): Promise<{
    delivery: StatusDelivery
    message?: proto.Message
    skdm?: { device: SimulatedDevice, skdm: Uint8Array }
    oldCounter?: boolean
    retry?: RetryAsk
  }> {
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
      // told to fail (failNextDecrypt): the pairwise message was read (its session stays in step), but the
      // device keeps neither the sender key nor the status, and asks for it again
      const failing = party ? device.failsStatus(statusId) : 0
      if (failing > 0) {
        // it lost the sender key (why a status fails to decrypt): an answer without an SKDM fails too
        device.forgetSenderKey(STATUS_JID, sender)
        delivery.skdm = learnt !== undefined
        delivery.retry = failing
        return { delivery, retry: { device, party: party!, count: failing } }
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

  protected async describe (record: StatusRecord, content: proto.IMessage): Promise<void> {
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

  protected async describeMedia (
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
}
