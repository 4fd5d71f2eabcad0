import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { encodeWAMessage, type BinaryNode, type WASocket } from '@whiskeysockets/baileys'
import { endSocket, linkWithQr, trustEmulatorRoot, unrefBaileysUploadTimer } from '../src/baileys-helpers.js'
import { startEmulator, testCertPaths, type ContactInfo, type Emulator } from '../src/index.js'

// The rules of a like of a contact's status (sent-to-contacts.ts): an E2EE reaction to status@broadcast,
// pairwise to the author's devices, never with <meta status_setting> (oxidezap/whatsapp-rust PRs #563, #569).
// Wrong shapes are NACKed 479 and reach nobody; the right one is read by each of the author's devices.

/** The ack of stanza `id` (its error, '' when none). */
function ackOf (sock: WASocket, id: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { sock.ws.off('CB:ack,class:message', listener); reject(new Error(`no ack for ${id}`)) }, timeoutMs)
    const listener = (node: BinaryNode): void => {
      if (node.attrs.id !== id) return
      clearTimeout(timer)
      sock.ws.off('CB:ack,class:message', listener)
      resolve(node.attrs.error ?? '')
    }
    sock.ws.on('CB:ack,class:message', listener)
  })
}

/** A reaction to `statusId`, encrypted pairwise for `devices`, with `extra` children after <participants>. */
async function reactionStanza (sock: WASocket, id: string, statusId: string, author: string, devices: string[], extra: BinaryNode[] = []): Promise<BinaryNode> {
  const data = encodeWAMessage({ reactionMessage: { key: { remoteJid: 'status@broadcast', id: statusId, fromMe: false, participant: author }, text: '💚', senderTimestampMs: Date.now() } })
  await sock.assertSessions(devices)
  const tos: BinaryNode[] = []
  for (const jid of devices) {
    const { type, ciphertext } = await sock.signalRepository.encryptMessage({ jid, data })
    tos.push({ tag: 'to', attrs: { jid }, content: [{ tag: 'enc', attrs: { v: '2', type, 'decrypt-fail': 'hide' }, content: ciphertext }] })
  }
  return { tag: 'message', attrs: { to: 'status@broadcast', id, type: 'reaction' }, content: [{ tag: 'participants', attrs: {}, content: tos }, ...extra] }
}

/** Polls until `check` gives something (decryption at the devices runs after the ack). */
async function eventually<T> (check: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = check()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe("likes of a contact's status", () => {
  const OWN = '15553390100'
  let emu: Emulator
  let alice: ContactInfo
  let bob: ContactInfo
  let sock: WASocket
  let statusId: string

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    alice = emu.addContact({ number: '15553390001', devices: 2 })
    bob = emu.addContact({ number: '15553390002' })
    emu.createAccount(OWN)
    sock = (await linkWithQr(emu, OWN)).sock
    statusId = (await emu.postContactStatus(OWN, { from: alice.number, text: 'liked?' })).id
  })

  after(async () => {
    await endSocket(sock)
    await emu.stop()
  })

  const aliceDevices = (): string[] => [`${alice.lid}@lid`, `${alice.lid}:1@lid`]

  it('pairwise to the author\'s devices, no meta: acked, each device reads a reaction naming the status', async () => {
    const node = await reactionStanza(sock, 'LIKE1', statusId, `${alice.lid}@lid`, aliceDevices())
    const ack = ackOf(sock, 'LIKE1')
    await sock.sendNode(node)
    assert.equal(await ack, '')
    const sent = await eventually(() => emu.sentToContacts(OWN).find((e) => e.id === 'LIKE1'), 'LIKE1 read')
    assert.equal(sent.refused, undefined)
    assert.deepEqual(sent.deliveries.map((d) => [d.device, d.decrypted, d.error]), [[0, true, undefined], [1, true, undefined]])
  })

  it('a reaction naming no status of its author is delivered, and dropped by the devices', async () => {
    const node = await reactionStanza(sock, 'LIKE2', 'NOSUCHSTATUS', `${alice.lid}@lid`, aliceDevices())
    const ack = ackOf(sock, 'LIKE2')
    await sock.sendNode(node)
    assert.equal(await ack, '', 'the server cannot see inside it')
    const sent = await eventually(() => emu.sentToContacts(OWN).find((e) => e.id === 'LIKE2'), 'LIKE2 read')
    assert.ok(sent.deliveries.every((d) => d.decrypted && /names no status/.test(d.error ?? '')))
  })

  it('with <meta status_setting>: 479, delivered to nobody (whatsapp-rust PR #569)', async () => {
    const node = await reactionStanza(sock, 'LIKE3', statusId, `${alice.lid}@lid`, aliceDevices(), [{ tag: 'meta', attrs: { status_setting: 'contacts' } }])
    const ack = ackOf(sock, 'LIKE3')
    await sock.sendNode(node)
    assert.equal(await ack, '479')
    const sent = emu.sentToContacts(OWN).find((e) => e.id === 'LIKE3')!
    assert.equal(sent.refused?.rule, 'reaction-no-status-setting')
    assert.deepEqual(sent.deliveries, [])
  })

  it("rc14's relayMessage (under the status sender key) is not a like: the status rules take it, the author's devices get nothing pairwise", async () => {
    const ack = ackOf(sock, 'LIKE4')
    await sock.relayMessage('status@broadcast', {
      reactionMessage: { key: { remoteJid: 'status@broadcast', id: statusId, fromMe: false, participant: `${alice.lid}@lid` }, text: '💚', senderTimestampMs: Date.now() }
    }, { messageId: 'LIKE4', statusJidList: [`${alice.lid}@lid`] })
    await ack
    assert.equal(emu.sentToContacts(OWN).find((e) => e.id === 'LIKE4'), undefined)
  })

  it('to the devices of two users: 479 (one author)', async () => {
    const node = await reactionStanza(sock, 'LIKE5', statusId, `${alice.lid}@lid`, [...aliceDevices(), `${bob.lid}@lid`])
    const ack = ackOf(sock, 'LIKE5')
    await sock.sendNode(node)
    assert.equal(await ack, '479')
    assert.equal(emu.sentToContacts(OWN).find((e) => e.id === 'LIKE5')?.refused?.rule, 'reaction-one-author')
  })
})
