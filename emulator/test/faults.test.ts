import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { DisconnectReason, type WASocket } from '@whiskeysockets/baileys'
import {
  ConnectError,
  connectUntilOpen,
  endSocket,
  linkWithQr,
  trustEmulatorRoot,
  unrefBaileysUploadTimer,
  waitForClose,
  waitForMessageAck,
  waitForMessageError
} from '../src/baileys-helpers.js'
import { startEmulator, testCertPaths, type Emulator } from '../src/index.js'

const CONTACT = '15554440009'
const jid = (number: string) => `${number}@s.whatsapp.net`

describe('faults', () => {
  let emu: Emulator
  const open = new Set<WASocket>()

  const link = async (number: string) => {
    // legacy (PN-only) accounts: these tests are about faults, and rc14's PN-addressed posts are what a legacy account sends
    emu.createAccount(number, { legacy: true })
    const linked = await linkWithQr(emu, number)
    open.add(linked.sock)
    return linked
  }

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    emu.addContact({ number: CONTACT, legacy: true })
  })

  after(async () => {
    await Promise.all([...open].map((s) => endSocket(s)))
    await emu.stop()
  })

  it('drop: the socket closes as connectionClosed (not loggedOut) and the device can reconnect', async () => {
    const { sock, auth } = await link('15554440001')
    const closed = waitForClose(sock)
    emu.fault('15554440001', 'drop')
    const { statusCode } = await closed
    assert.equal(statusCode, DisconnectReason.connectionClosed)
    assert.notEqual(statusCode, DisconnectReason.loggedOut)
    const again = await connectUntilOpen({ wsUrl: emu.wsUrl, auth })
    open.add(again)
    assert.equal(emu.getAccount('15554440001').connected, true)
  })

  it('restart-required: Baileys closes with 515 and logs in again', async () => {
    const { sock, auth } = await link('15554440002')
    const closed = waitForClose(sock)
    emu.fault('15554440002', 'restart-required')
    assert.equal((await closed).statusCode, DisconnectReason.restartRequired)
    const again = await connectUntilOpen({ wsUrl: emu.wsUrl, auth })
    open.add(again)
    assert.equal(again.user?.id, sock.user?.id)
  })

  it('logout: Baileys reports loggedOut (401) and the device can no longer log in', async () => {
    const { sock, auth } = await link('15554440003')
    const closed = waitForClose(sock)
    emu.fault('15554440003', 'logout')
    assert.equal((await closed).statusCode, DisconnectReason.loggedOut)
    assert.deepEqual(emu.getAccount('15554440003').linkedDevices, [])
    await assert.rejects(
      connectUntilOpen({ wsUrl: emu.wsUrl, auth }),
      (error: unknown) => error instanceof ConnectError && error.statusCode === DisconnectReason.loggedOut
    )
  })

  it('a second login of the same device ends the first with 440 conflict replaced, and is recorded', async () => {
    const number = '15554440006'
    const { sock, auth } = await link(number)
    assert.deepEqual(emu.replacedLogins(number), [])
    const closed = waitForClose(sock)
    const second = await connectUntilOpen({ wsUrl: emu.wsUrl, auth })
    open.add(second)
    assert.equal((await closed).statusCode, DisconnectReason.connectionReplaced)
    const [replaced, ...more] = emu.replacedLogins(number)
    assert.deepEqual(more, [])
    assert.equal(replaced.number, number)
    assert.ok(replaced.by > replaced.replaced, 'the newer connection replaced the older')
    assert.deepEqual(emu.replacedLogins().filter((r) => r.number === number), [replaced])
  })

  it('reject-next-status: the next status gets a 479 ack that Baileys reports as a failed message, the one after goes through', async () => {
    const { sock } = await link('15554440004')
    emu.fault('15554440004', 'reject-next-status')
    let rejectedId = ''
    const failed = waitForMessageError(sock, () => rejectedId)
    const rejected = await sock.sendMessage('status@broadcast', { text: 'rejected' }, { statusJidList: [jid(CONTACT)] })
    rejectedId = rejected!.key.id!
    const error = await failed
    assert.deepEqual(error.stubParameters, ['479'])
    assert.deepEqual(emu.rejectedMessages().map((r) => [r.id, r.error]), [[rejectedId, 479]])

    const accepted = await sock.sendMessage('status@broadcast', { text: 'accepted' }, { statusJidList: [jid(CONTACT)] })
    const record = await emu.waitForStatus((s) => s.id === accepted!.key.id)
    assert.equal(record.text, 'accepted')
    await emu.settled()
    assert.equal(emu.statuses().some((s) => s.id === rejectedId), false)
  })

  it('refuseStatuses: after N stanzas the next ones are refused with the code, delivered to nobody; the same id sent again goes through', async () => {
    const number = '15554440005'
    const { sock } = await link(number)
    assert.deepEqual(emu.refuseStatuses(number, { error: 429, count: 2, after: 1 }), { number, error: 429, left: 2, after: 1 })
    const send = async (text: string, messageId?: string) => {
      let id = messageId ?? ''
      const ack = waitForMessageAck(sock, () => id)
      const sent = await sock.sendMessage('status@broadcast', { text }, { statusJidList: [jid(CONTACT)], ...(messageId !== undefined ? { messageId } : {}) })
      id = sent!.key.id!
      return { id, ack: await ack }
    }
    const first = await send('let through')
    assert.equal(first.ack.error, undefined)
    const second = await send('refused once')
    assert.equal(second.ack.error, '429')
    const third = await send('refused twice')
    assert.equal(third.ack.error, '429')
    await emu.settled()
    assert.equal(emu.statuses().some((s) => s.id === second.id || s.id === third.id), false, 'a refused stanza reaches nobody')
    assert.deepEqual(emu.rejectedMessages().filter((r) => r.from === number).map((r) => [r.id, r.error]), [[second.id, 429], [third.id, 429]])
    // the refusals are used up: the refused id sent again is a stanza like any other, decrypted by the contact
    const resent = await send('refused once', second.id)
    assert.equal(resent.ack.error, undefined)
    const record = await emu.waitForStatus((s) => s.id === second.id && s.decrypted)
    assert.deepEqual([record.chunks, record.recipients.includes(CONTACT)], [1, true])
    assert.ok(record.deliveries.filter((d) => d.number === CONTACT).every((d) => d.decrypted))
  })

  it('refuseStatuses checks its options; count 0 ends the refusals', () => {
    assert.throws(() => emu.refuseStatuses('15554440004', { error: 42 }), /error must be a 3-digit code/)
    assert.throws(() => emu.refuseStatuses('15554440004', { error: 429, count: -1 }), /count must be an integer/)
    assert.throws(() => emu.refuseStatuses('15554440004', { error: 429, after: 1.5 }), /after must be an integer/)
    assert.throws(() => emu.refuseStatuses('15559999999', { error: 429 }), /15559999999/)
    emu.refuseStatuses('15554440004', { error: 503, count: 3 })
    assert.deepEqual(emu.refuseStatuses('15554440004', { error: 503, count: 0 }), { number: '15554440004', error: 503, left: 0, after: 0 })
  })
})
