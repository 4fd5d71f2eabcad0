// EmulatorServer, layer 2: linking and login (linking.ts holds the cryptography).
import { randomBytes } from 'node:crypto'
import { getBinaryNodeChildBuffer, jidDecode, proto, type BinaryNode } from '@whiskeysockets/baileys'
import { type Account, CompanionDevice } from './accounts.js'
import { newAckCounters } from './acks.js'
import type { LinkCodeAttempt } from './connection.js'
import { WaConnection } from './connection.js'
import { EmulatorError } from './errors.js'
import { DEFERRED, iqResult, IqError, type IqAnswer } from './iq-handlers.js'
import {
  buildPairSuccess,
  openKeyBundle,
  parseQr,
  unwrapCompanionEphemeral,
  verifyPairDeviceSign,
  wrapPrimaryEphemeral
} from './linking.js'
import { decodeQrDataUrl, isPngDataUrl } from './qr-image.js'
import type { LinkResult } from './types.js'
import { generateX25519KeyPair } from './xeddsa.js'
import { ServerBase } from './server-base.js'
import { unixNow } from './server-base.js'

/** Linking a companion (QR or pairing code), pairing, and logging in a linked device (offline queue, redelivery). */
export abstract class LinkingServer extends ServerBase {
  protected startRegistration (conn: WaConnection, pairingData: proto.ClientPayload.IDevicePairingRegistrationData): void {
    const { qrRefs, qrFirstTtlMs, qrNextTtlMs, qrCloseGraceMs } = this.config
    const now = Date.now()
    let expiresAt = now
    const refs: { ref: string, expiresAt: number }[] = []
    for (let i = 0; i < qrRefs; i++) {
      expiresAt += i === 0 ? qrFirstTtlMs : qrNextTtlMs
      const ref = `2@${randomBytes(30).toString('base64')}`
      refs.push({ ref, expiresAt })
      this.refs.set(ref, { conn, expiresAt })
    }
    // when the last ref has expired unscanned the server drops the socket; Baileys' own QR timer
    // (qrTimeout, same schedule) normally fires first and reports 408 "QR refs attempts ended"
    const closeTimer = setTimeout(() => {
      if (!conn.registration?.pairing) {
        this.logger.debug({ conn: conn.id }, 'all QR refs expired, closing')
        conn.close()
      }
    }, expiresAt - now + qrCloseGraceMs)
    closeTimer.unref()
    conn.registration = { pairingData, refs, closeTimer }
    conn.send({
      tag: 'iq',
      attrs: { from: 's.whatsapp.net', type: 'set', id: `pd-${randomBytes(6).toString('hex')}`, t: unixNow() },
      content: [
        {
          tag: 'pair-device',
          attrs: {},
          content: refs.map((r) => ({ tag: 'ref', attrs: {}, content: Buffer.from(r.ref) }))
        }
      ]
    })
  }

  /** The phone approves the companion: send pair-success (the companion answers with pair-device-sign). */
  protected startPairing (conn: WaConnection, account: Account, companionIdentity: Buffer, advSecret: Buffer): number {
    const registration = conn.registration!
    if (registration.closeTimer) clearTimeout(registration.closeTimer)
    for (const { ref } of registration.refs) this.refs.delete(ref)
    const deviceId = account.allocateDeviceId()
    const iqId = `ps-${randomBytes(6).toString('hex')}`
    let platform: string | undefined
    try {
      const props = registration.pairingData.deviceProps ? proto.DeviceProps.decode(registration.pairingData.deviceProps) : undefined
      platform = props?.os ?? undefined
    } catch {
      platform = undefined
    }
    registration.pairing = { iqId, account, deviceId, keyIndex: deviceId, companionIdentity, platform, done: false }
    registration.closeTimer = setTimeout(() => {
      if (!registration.pairing?.done) {
        this.logger.warn({ conn: conn.id }, 'no pair-device-sign in time, closing')
        conn.close()
      }
    }, this.config.linkTimeoutMs)
    registration.closeTimer.unref()
    conn.send(
      buildPairSuccess({
        iqId,
        number: account.number,
        lid: account.legacy ? undefined : account.lid,
        deviceId,
        keyIndex: deviceId,
        accountKey: account.accountKey,
        companionIdentity,
        advSecret,
        platform: 'android'
      })
    )
    this.logger.debug({ conn: conn.id, number: account.number, device: deviceId }, 'pair-success sent')
    this.changed()
    return deviceId
  }

  protected onIqResponse (conn: WaConnection, node: BinaryNode): void {
    const pairing = conn.registration?.pairing
    if (!pairing || pairing.done || node.attrs.id !== pairing.iqId) return
    pairing.done = true
    const pairingData = conn.registration!.pairingData
    const identity = Buffer.from(pairingData.eIdent ?? [])
    const verdict =
      node.attrs.type !== 'result'
        ? { ok: false as const, reason: 'client answered pair-success with an error' }
        : !identity.equals(pairing.companionIdentity)
            ? { ok: false as const, reason: 'identity in the QR/key bundle differs from the registration payload' }
            : verifyPairDeviceSign(node, pairing.companionIdentity, pairing.account.accountKey.public, pairing.keyIndex)
    if (!verdict.ok) {
      this.logger.error({ conn: conn.id, reason: verdict.reason }, 'pairing failed')
      conn.streamError('500')
      return
    }
    const { eRegid, eSkeyId, eSkeyVal, eSkeySig } = pairingData
    if (!eRegid?.length || !eSkeyId?.length || !eSkeyVal?.length || !eSkeySig?.length || !conn.clientStaticKey) {
      this.logger.error({ conn: conn.id }, 'pairing failed: incomplete registration payload')
      conn.streamError('500')
      return
    }
    const device = new CompanionDevice(
      pairing.deviceId,
      pairing.keyIndex,
      new Date(),
      pairing.platform,
      conn.clientStaticKey,
      identity,
      Buffer.from(eRegid).readUIntBE(0, eRegid.length),
      {
        keyId: Buffer.from(eSkeyId).readUIntBE(0, eSkeyId.length),
        publicKey: Buffer.from(eSkeyVal),
        signature: Buffer.from(eSkeySig)
      }
    )
    pairing.account.companions.set(device.id, device)
    this.logger.info({ number: pairing.account.number, device: device.id }, 'companion linked, asking it to restart')
    conn.streamError('515')
    this.changed()
  }

  protected login (conn: WaConnection, payload: proto.ClientPayload): void {
    const number = payload.username !== null && payload.username !== undefined ? String(payload.username) : ''
    const deviceId = payload.device ?? 0
    const party = this.directory.getByNumber(number)
    const device = party?.kind === 'account' ? party.companions.get(deviceId) : undefined
    const refusal = !device
      ? 'unknown device'
      : device.removed
        ? 'device was logged out'
        : !conn.clientStaticKey?.equals(device.noiseKey)
            ? 'noise key differs from the one registered at pairing'
            : undefined
    if (refusal || !device || party?.kind !== 'account') {
      this.logger.info({ number, device: deviceId, refusal }, 'login refused')
      conn.send({ tag: 'failure', attrs: { reason: '401', location: 'emulator' } })
      conn.close()
      return
    }
    // one socket per linked device: the platform ends the older one with a conflict (Baileys sees 440 "Stream
    // Errored (conflict)", whatsmeow an events.StreamReplaced), and the emulator keeps a record of it for tests
    for (const other of this.connections) {
      if (other !== conn && other.device === device && other.isOpen) {
        this.replaced.push({ number, device: device.id, replaced: other.id, by: conn.id, at: new Date().toISOString() })
        other.streamError('440', { tag: 'conflict', attrs: { type: 'replaced' } })
      }
    }
    conn.account = party
    conn.device = device
    const entry = this.connectionEntries.get(conn)
    if (entry !== undefined) { entry.number = party.number; entry.loggedInAt = new Date().toISOString() }
    conn.send({
      tag: 'success',
      attrs: {
        t: unixNow(),
        props: '1',
        abprops: '1',
        location: 'emulator',
        creation: String(Math.floor(device.linkedAt.getTime() / 1000)),
        // a legacy (not LID-migrated) account is not told a LID, so Baileys' creds.me.lid stays unset
        ...(party.legacy ? {} : { lid: `${party.lid}:${device.id}@lid` })
      }
    })
    conn.acks = newAckCounters(conn.id, device.id)
    device.acks.open(conn.acks)
    // what earlier connections left unacked comes again first (oldest first, same stanzas)
    const unacked = device.acks.redeliver(conn.acks)
    const queued = device.offlineQueue.splice(0)
    const offline = [...unacked, ...queued]
    // the server delivers what queued up while the device was away, then marks the end of the offline queue
    conn.sendMany([
      ...offline.map((n) => ({ ...n, attrs: { ...n.attrs, offline: '1' } })),
      { tag: 'ib', attrs: { from: 's.whatsapp.net' }, content: [{ tag: 'offline', attrs: { count: String(offline.length) } }] }
    ])
    device.acks.delivered(queued, conn.acks)
    this.statusesWritten(conn, device, unacked, true)
    this.statusesWritten(conn, device, queued, false)
    this.shareAppStateKey(party, device)
    this.logger.debug({ conn: conn.id, number, device: device.id, offline: queued.length, redelivered: unacked.length }, 'logged in')
    this.changed()
  }

  async onLinkCodeIq (conn: WaConnection, iq: BinaryNode, child: BinaryNode): Promise<IqAnswer> {
    const registration = conn.registration
    if (!registration || registration.pairing) throw new IqError(400, 'bad-request')
    const stage = child.attrs.stage
    if (stage === 'companion_hello') {
      const number = jidDecode(child.attrs.jid)?.user
      const wrapped = getBinaryNodeChildBuffer(child, 'link_code_pairing_wrapped_companion_ephemeral_pub')
      const noiseKey = getBinaryNodeChildBuffer(child, 'companion_server_auth_key_pub')
      if (!number || !wrapped || wrapped.length !== 80) throw new IqError(400, 'bad-request')
      if (!noiseKey || !conn.clientStaticKey?.equals(Buffer.from(noiseKey))) throw new IqError(400, 'bad-request')
      const ref = randomBytes(16).toString('base64')
      registration.linkCode = { number, ref, wrappedEphemeral: Buffer.from(wrapped) }
      this.logger.debug({ conn: conn.id, number }, 'pairing-code request (companion_hello)')
      this.changed()
      return [
        {
          tag: 'link_code_companion_reg',
          attrs: {},
          content: [{ tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(ref) }]
        }
      ]
    }
    if (stage === 'companion_finish') {
      const request = registration.linkCode
      const attempt = request?.attempt
      if (!request || !attempt) throw new IqError(400, 'bad-request')
      const ref = getBinaryNodeChildBuffer(child, 'link_code_pairing_ref')
      const wrappedBundle = getBinaryNodeChildBuffer(child, 'link_code_pairing_wrapped_key_bundle')
      const companionIdentity = getBinaryNodeChildBuffer(child, 'companion_identity_public')
      request.attempt = undefined
      let advSecret: Buffer
      try {
        if (!ref || Buffer.from(ref).toString() !== request.ref) throw new EmulatorError(400, 'companion_finish for another pairing ref')
        if (!wrappedBundle || !companionIdentity) throw new EmulatorError(400, 'companion_finish without key bundle or identity')
        ;({ advSecret } = openKeyBundle({
          primaryEphemeral: attempt.primaryEphemeral,
          companionEphemeralPublic: attempt.companionEphemeral,
          wrappedBundle: Buffer.from(wrappedBundle),
          companionIdentity: Buffer.from(companionIdentity),
          accountKey: attempt.account.accountKey
        }))
      } catch (error) {
        attempt.settle(error as Error)
        throw new IqError(400, 'bad-request')
      }
      conn.send(iqResult(iq))
      const device = this.startPairing(conn, attempt.account, Buffer.from(companionIdentity!), advSecret)
      attempt.settle({ device })
      return DEFERRED
    }
    throw new IqError(400, 'bad-request')
  }

  onRemoveCompanion (conn: WaConnection): void {
    if (conn.device) {
      conn.device.removed = true
      conn.device.removedAt = new Date()
      conn.device.offlineQueue.length = 0
      conn.device.acks.clear()
      this.logger.info({ number: conn.account?.number, device: conn.device.id }, 'companion logged itself out')
    }
    setImmediate(() => conn.close())
  }

  async scan (number: string, qr: string): Promise<LinkResult> {
    const account = this.directory.account(number)
    if (typeof qr !== 'string' || !qr) throw new EmulatorError(400, 'qr must be a string')
    const parsed = parseQr(isPngDataUrl(qr) ? decodeQrDataUrl(qr) : qr)
    const entry = this.refs.get(parsed.ref)
    if (!entry) throw new EmulatorError(404, 'QR code not recognised (unknown ref, or its connection is gone)')
    if (Date.now() > entry.expiresAt) throw new EmulatorError(400, 'QR code expired')
    const { conn } = entry
    if (!conn.isOpen || !conn.registration || conn.registration.pairing) {
      throw new EmulatorError(409, 'the connection showing this QR code is no longer waiting to be linked')
    }
    if (!conn.clientStaticKey || !parsed.noiseKey.equals(conn.clientStaticKey)) {
      throw new EmulatorError(400, 'QR noise key does not belong to the connection that showed it')
    }
    if (!parsed.identityKey.equals(Buffer.from(conn.registration.pairingData.eIdent ?? []))) {
      throw new EmulatorError(400, 'QR identity key differs from the registration payload')
    }
    return { linked: true, device: this.startPairing(conn, account, parsed.identityKey, parsed.advSecret) }
  }

  async enterCode (number: string, rawCode: string): Promise<LinkResult> {
    const account = this.directory.account(number)
    const code = String(rawCode ?? '').replace(/[\s-]/g, '').toUpperCase()
    if (!/^[0-9A-Z]{8}$/.test(code)) throw new EmulatorError(400, 'a pairing code is 8 letters/digits')
    const conn = await this.waitUntil(
      () =>
        [...this.connections]
          .reverse()
          .find((c) => c.isOpen && c.registration?.linkCode?.number === account.number && !c.registration.pairing),
      this.config.linkTimeoutMs,
      () => new EmulatorError(409, `no client is waiting for a pairing code for ${account.number}`)
    )
    const request = conn.registration!.linkCode!
    if (request.attempt) throw new EmulatorError(409, 'a pairing code is already being checked for this client')
    const companionEphemeral = await unwrapCompanionEphemeral(code, request.wrappedEphemeral)
    const primaryEphemeral = generateX25519KeyPair()
    const wrappedPrimary = await wrapPrimaryEphemeral(code, primaryEphemeral.public)
    const outcome = new Promise<{ device: number }>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (request.attempt === attempt) request.attempt = undefined
        reject(new EmulatorError(504, `client did not finish pairing within ${this.config.linkTimeoutMs} ms`))
      }, this.config.linkTimeoutMs)
      const attempt: LinkCodeAttempt = {
        account,
        primaryEphemeral,
        companionEphemeral,
        settle: (result) => {
          clearTimeout(timer)
          if (result instanceof Error) reject(result)
          else resolve(result)
        }
      }
      request.attempt = attempt
    })
    conn.send({
      tag: 'notification',
      attrs: { from: 's.whatsapp.net', type: 'link_code_companion_reg', id: randomBytes(8).toString('hex').toUpperCase(), t: unixNow() },
      content: [
        {
          tag: 'link_code_companion_reg',
          attrs: {},
          content: [
            { tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(request.ref) },
            { tag: 'primary_identity_pub', attrs: {}, content: account.accountKey.public },
            { tag: 'link_code_pairing_wrapped_primary_ephemeral_pub', attrs: {}, content: wrappedPrimary }
          ]
        }
      ]
    })
    const { device } = await outcome
    return { linked: true, device }
  }
}
