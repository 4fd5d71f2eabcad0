/**
 * Statuses as the recipients see them: every `<message to="status@broadcast">` is decrypted for each
 * addressed device the emulator holds keys for (pkmsg/msg → sender key distribution message →
 * skmsg), then recorded per message id (several stanzas with one id are merged as chunks).
 */
import { createHash } from 'node:crypto'
import { normalizeMessageContent, proto, type BinaryNode } from '@whiskeysockets/baileys'
import { signalNameOf, type Account } from './accounts.js'
import { decryptSenderKeyMessage, signalSenderFor, type SimulatedDevice } from './signal-party.js'
import {
  kindFromStanza,
  kindOfContent,
  kindRuleBroken,
  readStanza,
  RULE_ERROR,
  stanzaRuleBroken,
  type RuleBreak,
  type StanzaShape
} from './status-rules.js'
import type { StatusDelivery, StatusKind, StatusRecord, StatusStanza } from './types.js'
import { STATUS_JID, YIELD_EVERY, type Verdict, type Decision, type RevokeState, type RetryAsk, type RetrySender } from './status-book.js'
import { StatusRetries } from './status-retries.js'

export type { RetrySender, Verdict }

/** Takes the status stanzas in order (the rules, the fan-out, retries, revokes): the last of StatusCenter's layers. */
export class StatusCenter extends StatusRetries {
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
    const retried = this.retryAnswerOf(account, shape)
    if (retried) {
      // WA Web's answer to a retry carries no <meta> and no audience list (whatsapp-rust src/retry.rs
      // retransmit_status_message: prepare_group_stanza with extra_nodes empty): only the stanza rules apply
      decide('post', stanzaRuleBroken(shape, account))
      this.queue = this.queue.then(async () => {
        try {
          await this.processRetryAnswer(account, deviceId, shape, retried, arrivedAt, decision)
        } catch (error) {
          this.logger.error({ id: node.attrs.id, err: (error as Error).message }, 'status retry answer processing failed')
        } finally {
          this.settle()
        }
      })
      return
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
        this.settle()
      }
    })
  }

  /** Runs `work` after every status stanza queued so far (a one-to-one message must not overtake the SKDM session it follows). */
  async afterQueued<T> (work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work)
    this.queue = run.then(() => undefined, () => undefined)
    return await run
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
      tag: shape.tag === 'status' ? 'status' : 'message',
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
    /** devices told to fail it: they ask for it again once it was recorded */
    const asks: RetryAsk[] = []
    if (!decision.broken) {
      const fanout = this.fanout(account, deviceId, shape)
      let count = 0
      for (const target of fanout) {
        if (++count % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve))
        if (decision.broken) break
        const result = await this.decryptFor(target, sender, shape.skmsg, chunk, id)
        deliveries.push(result.delivery)
        if (result.retry) asks.push(result.retry)
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
      this.rejected.push({
        id, from: account.number, to: STATUS_JID, error: RULE_ERROR, at: arrivedAt.toISOString(), rule: broken.rule, detail: broken.detail, kind
      })
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
    // the users the post names (status-mentions.ts), as the first stanza carrying them lists them
    if (!record.mentionedUsers && shape.mentioned) record.mentionedUsers = [...shape.mentioned]
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
        const secret = messages[0].messageContextInfo?.messageSecret
        record.messageSecret = secret instanceof Uint8Array && secret.length === 32
        if (record.messageSecret) this.secrets.set(id, Buffer.from(secret!))
        await this.describe(record, content)
      } else if (state.contentDigest !== digest) {
        record.errors.push(`chunk ${chunk}: content differs from the first chunk`)
      }
    }
    this.logger.debug({ id, chunk, recipients: record.recipients.length, type: record.type }, 'status recorded')
    this.askAgain(account, deviceId, record, asks, arrivedAt)
    this.notify(record)
    const pendingRevoke = [...this.revokes.values()].find((r) => r.targetId === id)
    if (pendingRevoke) this.markRevoked(record, pendingRevoke)
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
