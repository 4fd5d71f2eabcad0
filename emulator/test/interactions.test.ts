import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { WAMessage, WASocket } from '@whiskeysockets/baileys'
import { endSocket, linkWithQr, relayStatus, trustEmulatorRoot, unrefBaileysUploadTimer, waitForEvent } from '../src/baileys-helpers.js'
import { EmulatorError, startEmulator, testCertPaths, type ContactInfo, type Emulator } from '../src/index.js'

const OWN = '15554440000'
const jid = (number: string) => `${number}@s.whatsapp.net`

// Reactions and replies to a status reach a real Baileys client decrypted, in the platform's shapes,
// and Baileys' answer (a delivery receipt) counts as their acknowledgement.
describe('status reactions and replies', () => {
  let emu: Emulator
  let sock: WASocket
  let alice: ContactInfo
  let bob: ContactInfo
  let statusId = ''

  const nextMessage = (id: () => string) =>
    waitForEvent(sock, 'messages.upsert', (u) => u.messages.some((m) => m.key.id === id()))
      .then((u) => u.messages.find((m) => m.key.id === id()) as WAMessage)

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    const own = emu.createAccount(OWN)
    alice = emu.addContact({ number: '15554440001' })
    bob = emu.addContact({ number: '15554440002', devices: 2 })
    ;({ sock } = await linkWithQr(emu, OWN))
    statusId = await relayStatus(sock, { text: 'liked?' }, { statusJidList: [own.lid, alice.lid, bob.lid].map((lid) => `${lid}@lid`) })
    await emu.waitForStatus((s) => s.id === statusId && s.decrypted)
  })

  after(async () => {
    await endSocket(sock)
    await emu.stop()
  })

  for (const via of ['pn', 'lid'] as const) {
    it(`a reaction by ${via.toUpperCase()} arrives as a reactionMessage keyed to the status`, async () => {
      let id = ''
      const got = nextMessage(() => id)
      const result = await emu.react(statusId, { from: alice.number, emoji: '❤️', via })
      id = result.messageId
      assert.deepEqual({ ...result, messageId: undefined }, { sent: true, messageId: undefined, deliveredTo: 1, queuedFor: 0 })
      const msg = await got
      const sender = via === 'pn' ? jid(alice.number) : `${alice.lid}@lid`
      assert.equal(msg.key.remoteJid, sender)
      assert.equal(msg.key.fromMe, false)
      const reaction = msg.message?.reactionMessage
      assert.equal(reaction?.text, '❤️')
      // Baileys' cleanMessage rewrites the key's remoteJid (status@broadcast on the wire) to the chat and
      // sets fromMe, having recognised the participant as its own account (by number or by LID)
      assert.equal(reaction?.key?.id, statusId)
      assert.equal(reaction?.key?.fromMe, true)
      assert.equal(reaction?.key?.participant, via === 'pn' ? jid(OWN) : `${emu.getAccount(OWN).lid}@lid`)
      assert.ok(Number(reaction?.senderTimestampMs) > Date.now() - 60_000)
    })
  }

  it('an empty emoji takes the reaction back', async () => {
    let id = ''
    const got = nextMessage(() => id)
    id = (await emu.react(statusId, { from: alice.number, emoji: '' })).messageId
    assert.equal((await got).message?.reactionMessage?.text, '')
  })

  it('a reply from a second device quotes the status', async () => {
    let id = ''
    const got = nextMessage(() => id)
    id = (await emu.reply(statusId, { from: bob.number, text: 'nice one', device: 1 })).messageId
    const msg = await got
    assert.equal(msg.key.remoteJid, jid(bob.number))
    const ext = msg.message?.extendedTextMessage
    assert.equal(ext?.text, 'nice one')
    assert.equal(ext?.contextInfo?.remoteJid, 'status@broadcast')
    assert.equal(ext?.contextInfo?.stanzaId, statusId)
    assert.equal(ext?.contextInfo?.participant, jid(OWN))
    assert.equal(ext?.contextInfo?.quotedMessage?.extendedTextMessage?.text, 'liked?')
  })

  it('Baileys acknowledges them with its delivery receipt: nothing stays unacked', async () => {
    await emu.settled()
    const deadline = Date.now() + 5000
    while (emu.unackedCount(OWN) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    assert.equal(emu.unackedCount(OWN), 0)
    const stats = emu.ackStats(OWN).at(-1)!
    assert.ok(stats.acked >= 4, `acked ${stats.acked}`)
    assert.equal(stats.nacked, 0)
  })

  it('refuses a contact that did not get the status, an unknown status and bad input', async () => {
    const carol = emu.addContact({ number: '15554440003' })
    await assert.rejects(emu.react(statusId, { from: carol.number, emoji: '👍' }), (e: EmulatorError) => e.status === 400)
    await assert.rejects(emu.reply('NOPE', { from: alice.number, text: 'x' }), (e: EmulatorError) => e.status === 404)
    await assert.rejects(emu.reply(statusId, { from: alice.number, text: '' }), (e: EmulatorError) => e.status === 400)
    await assert.rejects(emu.react(statusId, { from: alice.number }), (e: EmulatorError) => e.status === 400)
    await assert.rejects(emu.react(statusId, { from: alice.number, emoji: 'x', via: 'x' as 'pn' }), (e: EmulatorError) => e.status === 400)
  })

  it('the control API answers { sent, messageId }', async () => {
    const res = await fetch(`${emu.controlUrl}/statuses/${statusId}/replies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: alice.number, text: 'via http', via: 'lid' })
    })
    assert.equal(res.status, 200)
    const body = await res.json() as { sent: boolean, messageId: string }
    assert.equal(body.sent, true)
    assert.match(body.messageId, /^3A[0-9A-F]{18}$/)
    const bad = await fetch(`${emu.controlUrl}/statuses/${statusId}/reactions`, { method: 'POST', body: '{}' })
    assert.equal(bad.status, 400)
  })
})
