import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { BaileysEventMap, WASocket } from '@whiskeysockets/baileys'
import {
  connectUntilOpen,
  endSocket,
  linkWithQr,
  relayStatus,
  trustEmulatorRoot,
  unrefBaileysUploadTimer,
  waitForEvent
} from '../src/baileys-helpers.js'
import { EmulatorError, startEmulator, testCertPaths, type ContactInfo, type Emulator } from '../src/index.js'

type ReceiptUpdate = BaileysEventMap['message-receipt.update'][number]

const OWN = '15553330000'
const jid = (number: string) => `${number}@s.whatsapp.net`

describe('view receipts', () => {
  let emu: Emulator
  let sock: WASocket
  let auth: Awaited<ReturnType<typeof linkWithQr>>['auth']
  let alice: ContactInfo
  let bob: ContactInfo
  let statusId = ''
  let secondId = ''

  const nextReceipts = (count: number) => {
    const seen: ReceiptUpdate[] = []
    return waitForEvent(sock, 'message-receipt.update', (updates) => {
      seen.push(...updates)
      return seen.length >= count
    }).then(() => seen)
  }

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    const own = emu.createAccount(OWN)
    alice = emu.addContact({ number: '15553330001' })
    bob = emu.addContact({ number: '15553330002', devices: 2 })
    ;({ sock, auth } = await linkWithQr(emu, OWN))
    // LID-addressed posts with <meta status_setting> (the account is LID-migrated); relayMessage emits
    // no own messages.upsert, so no receipt can be folded into one
    const statusJidList = [own.lid, alice.lid, bob.lid].map((lid) => `${lid}@lid`)
    for (const text of ['first', 'second']) {
      const id = await relayStatus(sock, { text }, { statusJidList })
      await emu.waitForStatus((s) => s.id === id && s.decrypted)
      if (!statusId) statusId = id
      else secondId = id
    }
  })

  after(async () => {
    await endSocket(sock)
    await emu.stop()
  })

  for (const via of ['pn', 'lid'] as const) {
    for (const type of ['read', 'played'] as const) {
      it(`${type} by ${via.toUpperCase()} sets readTimestamp for that viewer`, async () => {
        const viewer = via === 'pn' ? jid(alice.number) : `${alice.lid}@lid`
        const received = nextReceipts(1)
        const result = await emu.sendView(statusId, { viewer: alice.number, type, via })
        assert.deepEqual(result, { sent: true, stanzas: 1, deliveredTo: 1, queuedFor: 0 })
        const [update] = await received
        assert.deepEqual(update.key, { remoteJid: 'status@broadcast', id: statusId, fromMe: true, participant: viewer })
        assert.equal(update.receipt.userJid, viewer)
        assert.equal(typeof update.receipt.readTimestamp, 'number')
        assert.ok(Math.abs(Number(update.receipt.readTimestamp) - Date.now() / 1000) < 60)
        assert.equal(update.receipt.receiptTimestamp, undefined)
      })
    }
    it(`delivery by ${via.toUpperCase()} sets only receiptTimestamp`, async () => {
      const viewer = via === 'pn' ? jid(bob.number) : `${bob.lid}@lid`
      const received = nextReceipts(1)
      await emu.sendView(statusId, { viewer: bob.number, type: 'delivery', via })
      const [update] = await received
      assert.equal(update.receipt.userJid, viewer)
      assert.equal(typeof update.receipt.receiptTimestamp, 'number')
      assert.equal(update.receipt.readTimestamp, undefined)
    })
  }

  it('grouped: one stanza per viewer carries several status ids as <list><item/></list>', async () => {
    const received = nextReceipts(4)
    const result = await emu.sendViews(statusId, { viewers: [alice.number, bob.number], grouped: true, alsoStatusIds: [secondId] })
    assert.equal(result.stanzas, 2)
    const updates = await received
    const pairs = updates.map((u) => `${u.receipt.userJid}|${u.key.id}`).sort()
    assert.deepEqual(
      pairs,
      [
        `${jid(alice.number)}|${statusId}`,
        `${jid(alice.number)}|${secondId}`,
        `${jid(bob.number)}|${statusId}`,
        `${jid(bob.number)}|${secondId}`
      ].sort()
    )
  })

  it('refuses views from someone who did not receive the status, and unknown statuses', async () => {
    const outsider = emu.addContact({ number: '15553339999' })
    await assert.rejects(emu.sendView(statusId, { viewer: outsider.number }), (e: unknown) => e instanceof EmulatorError && e.status === 400)
    await assert.rejects(emu.sendView('NOPE', { viewer: alice.number }), (e: unknown) => e instanceof EmulatorError && e.status === 404)
    await assert.rejects(
      emu.sendView(statusId, { viewer: alice.number, type: 'seen' as never }),
      (e: unknown) => e instanceof EmulatorError && e.status === 400
    )
  })

  it('revealLid tells the account a contact\'s LID ↔ number: Baileys emits lid-mapping.update and stores it', async () => {
    const stranger = emu.addContact({ number: '15553338888' })
    const lid = `${stranger.lid}@lid`
    assert.equal(await sock.signalRepository.lidMapping.getPNForLID(lid), null, 'never asked about: unmapped')
    const update = waitForEvent(sock, 'lid-mapping.update', (m) => m.lid === lid)
    const result = emu.revealLid(stranger.number, { to: OWN })
    assert.deepEqual(result, { sent: true, stanzas: 1, deliveredTo: 1, queuedFor: 0 })
    assert.deepEqual(await update, { lid, pn: jid(stranger.number) })
    const deadline = Date.now() + 5_000
    while (emu.unackedCount(OWN) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.equal(emu.unackedCount(OWN), 0, 'the notification is acked')
    assert.match(await sock.signalRepository.lidMapping.getPNForLID(lid) ?? '', new RegExp(`^${stranger.number}(:0)?@s\\.whatsapp\\.net$`))
    assert.throws(() => emu.revealLid(stranger.number, { to: '15550000404' }), (e: unknown) => e instanceof EmulatorError && e.status === 404)
    assert.throws(() => emu.revealLid('15550000404', { to: OWN }), (e: unknown) => e instanceof EmulatorError && e.status === 404)
  })

  it('keeps receipts for an offline device and delivers them at its next login', async () => {
    await endSocket(sock)
    const result = await emu.sendView(statusId, { viewer: alice.number, type: 'read', via: 'lid' })
    assert.equal(result.deliveredTo, 0)
    assert.equal(result.queuedFor, 1)
    const seen: ReceiptUpdate[] = []
    sock = await connectUntilOpen({
      wsUrl: emu.wsUrl,
      auth,
      onSocket: (s) => s.ev.on('message-receipt.update', (updates) => seen.push(...updates))
    })
    const deadline = Date.now() + 5_000
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.equal(seen.length, 1)
    assert.equal(seen[0].key.id, statusId)
    assert.equal(seen[0].receipt.userJid, `${alice.lid}@lid`)
  })
})
