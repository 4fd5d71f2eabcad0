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
})
