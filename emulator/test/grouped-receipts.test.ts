import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { buildAckStanza, type BinaryNode, type WASocket } from '@whiskeysockets/baileys'
import type { WebSocket } from 'ws'
import { AckLedger, newAckCounters } from '../src/acks.js'
import {
  connectUntilOpen,
  endSocket,
  linkWithQr,
  relayStatus,
  trustEmulatorRoot,
  unrefBaileysUploadTimer,
  waitForClose
} from '../src/baileys-helpers.js'
import { EmulatorError, startEmulator, testCertPaths, type ContactInfo, type Emulator } from '../src/index.js'

const OWN = '15551110000'
const pn = (number: string) => `${number}@s.whatsapp.net`

async function eventually (probe: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** `<user>` attributes of a grouped receipt, in order */
const usersOf = (node: BinaryNode) => {
  const participants = (node.content as BinaryNode[])[0]
  return { messageId: participants.attrs.message_id, users: (participants.content as BinaryNode[]).map((u) => ({ ...u.attrs })) }
}

describe('grouped view receipts (tulir/whatsmeow #1270)', () => {
  let emu: Emulator
  let sock: WASocket
  let auth: Awaited<ReturnType<typeof linkWithQr>>['auth']
  let viewers: ContactInfo[]
  let statusId = ''
  const raw: BinaryNode[] = []
  const events: string[] = []

  const watch = (s: WASocket) => {
    s.ws.on('CB:receipt', (node: BinaryNode) => raw.push(node))
    s.ev.on('message-receipt.update', (updates) => events.push(...updates.map((u) => u.key.id ?? '')))
  }

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    const own = emu.createAccount(OWN)
    viewers = emu.addContacts(3, { prefix: '1555111' })
    ;({ sock, auth } = await linkWithQr(emu, OWN))
    watch(sock)
    statusId = await relayStatus(sock, { text: 'seen?' }, { statusJidList: [own.lid, ...viewers.map((v) => v.lid)].map((lid) => `${lid}@lid`) })
    await emu.waitForStatus((s) => s.id === statusId && s.decrypted)
  })

  after(async () => {
    await endSocket(sock)
    await emu.stop()
  })

  it('sends several viewers in one stanza: class="status", no type, <participants message_id>, a type per <user>, LIDs, participant_pn on some; Baileys acks it', async () => {
    const [a, b, c] = viewers
    const result = await emu.sendGroupedReceipts(statusId, {
      viewers: [{ viewer: a.number, type: 'delivery' }, { viewer: b.number, type: 'read', participantPn: true, t: 1_790_000_000 }, c.number],
      type: 'played'
    })
    assert.deepEqual({ ...result, ids: undefined }, { sent: true, stanzas: 1, deliveredTo: 1, queuedFor: 0, ids: undefined })
    assert.match(result.ids[0], /^SAGR[0-9A-F]+$/)
    await eventually(() => raw.some((n) => n.attrs.id === result.ids[0]), 'the receipt to reach Baileys')
    const node = raw.find((n) => n.attrs.id === result.ids[0])!
    assert.deepEqual({ ...node.attrs, t: undefined }, { class: 'status', from: 'status@broadcast', id: result.ids[0], t: undefined })
    assert.equal(node.attrs.type, undefined)
    const { messageId, users } = usersOf(node)
    assert.equal(messageId, statusId)
    assert.deepEqual(users.map((u) => ({ ...u, t: undefined })), [
      { jid: `${a.lid}@lid`, type: 'delivery', t: undefined },
      { jid: `${b.lid}@lid`, type: 'read', participant_pn: pn(b.number), t: undefined },
      { jid: `${c.lid}@lid`, type: 'played', t: undefined }
    ])
    assert.equal(users[1].t, '1790000000')
    // Baileys acks <ack class="receipt" id="SAGR…" to="status@broadcast"/> after handling it
    await eventually(() => emu.unackedCount(OWN) === 0, 'the grouped receipt to be acked')
    const stats = emu.ackStats(OWN).at(-1)!
    assert.deepEqual([stats.delivered, stats.acked, stats.unmatched, stats.unacked], [1, 1, 0, 0])
    // rc14 only reports status receipts that carry a participant attribute (messages-recv.js handleReceipt)
    assert.equal(events.includes(statusId), false, 'rc14 emits no message-receipt.update for the grouped form')
  })

  it('receipts carry the feature-incapable error and a stanza-level participant_pn when asked (whatsapp-rust PRs #708, #724)', async () => {
    const [a, b] = viewers
    const before = raw.length
    await emu.sendView(statusId, { viewer: a.number, type: 'delivery', via: 'lid', participantPn: true, featureIncapable: true })
    await emu.sendView(statusId, { viewer: b.number, type: 'read', via: 'lid', participantPn: true })
    const grouped = await emu.sendGroupedReceipts(statusId, { viewers: [a.number], type: 'delivery', featureIncapable: true })
    await eventually(() => raw.length >= before + 3, 'the three receipts')
    const [incapable, read, group] = raw.slice(before)
    assert.deepEqual({ ...incapable.attrs, t: undefined }, { from: 'status@broadcast', participant: `${a.lid}@lid`, participant_pn: pn(a.number), id: statusId, t: undefined })
    assert.deepEqual((incapable.content as BinaryNode[]).map((c) => [c.tag, { ...c.attrs }]), [['error', { reason: 'lid', type: 'feature-incapable' }]])
    assert.deepEqual({ ...read.attrs, t: undefined }, { from: 'status@broadcast', participant: `${b.lid}@lid`, participant_pn: pn(b.number), id: statusId, type: 'read', t: undefined })
    assert.equal(read.content, undefined)
    assert.equal(group.attrs.id, grouped.ids[0])
    assert.deepEqual((group.content as BinaryNode[]).map((c) => c.tag), ['participants', 'error'])
    assert.deepEqual({ ...(group.content as BinaryNode[])[1].attrs }, { reason: 'lid', type: 'feature-incapable' })
    await eventually(() => emu.unackedCount(OWN) === 0, 'all three to be acked')
    // only a delivery carries the error; participant_pn names a LID participant's number
    await assert.rejects(emu.sendView(statusId, { viewer: a.number, type: 'read', via: 'lid', featureIncapable: true }), /featureIncapable needs type 'delivery'/)
    await assert.rejects(emu.sendView(statusId, { viewer: a.number, via: 'pn', participantPn: true }), /participantPn needs via 'lid'/)
  })

  it('splits viewers over stanzas with perStanza, each with its own id', async () => {
    const before = raw.length
    const result = await emu.sendGroupedReceipts(statusId, { viewers: viewers.map((v) => v.number), perStanza: 2, type: 'read' })
    assert.equal(result.stanzas, 2)
    assert.equal(new Set(result.ids).size, 2)
    await eventually(() => raw.length >= before + 2, 'both stanzas')
    assert.deepEqual(raw.slice(before).map((n) => usersOf(n).users.length), [2, 1])
    await eventually(() => emu.unackedCount(OWN) === 0, 'both to be acked')
  })

  it('the ack ledger matches the grouped form to the ack Baileys builds for it', () => {
    const ledger = new AckLedger()
    const conn = newAckCounters(1, 1)
    ledger.open(conn)
    const node: BinaryNode = {
      tag: 'receipt',
      attrs: { class: 'status', from: 'status@broadcast', id: 'SAGR01', t: '1' },
      content: [{ tag: 'participants', attrs: { message_id: '3EB0AA' }, content: [{ tag: 'user', attrs: { jid: '1@lid', t: '1', type: 'read' } }] }]
    }
    ledger.delivered([node], conn)
    const ack = buildAckStanza(node, undefined, `${OWN}:1@s.whatsapp.net`)
    assert.deepEqual(ack.attrs, { id: 'SAGR01', to: 'status@broadcast', class: 'receipt' })
    assert.equal(ledger.ack(ack, conn), true)
    assert.deepEqual([ledger.size, conn.acked, conn.unmatched], [0, 1, 0])
  })

  it('a client killed before acking gets the same grouped stanza again at its next login, then acks it', async () => {
    const socket = (sock.ws as unknown as { socket: WebSocket | null }).socket!
    const killed = new Promise<void>((resolve) => {
      sock.ws.once('CB:receipt', () => {
        socket.terminate()
        resolve()
      })
    })
    const closed = waitForClose(sock)
    const { ids: [id] } = await emu.sendGroupedReceipts(statusId, { viewers: [viewers[0].number], type: 'played' })
    await killed
    await closed
    await eventually(() => !emu.getAccount(OWN).connected, 'the emulator to see the close')
    assert.equal(emu.unackedCount(OWN), 1)
    const before = raw.length
    sock = await connectUntilOpen({ wsUrl: emu.wsUrl, auth, onSocket: watch })
    await eventually(() => emu.unackedCount(OWN) === 0, 'the redelivered receipt to be acked')
    const again = raw.slice(before).filter((n) => n.attrs.id === id)
    assert.equal(again.length, 1)
    assert.equal(again[0].attrs.offline, '1')
    assert.deepEqual(usersOf(again[0]).users.map((u) => u.type), ['played'])
    const stats = emu.ackStats(OWN).at(-1)!
    assert.deepEqual([stats.redelivered, stats.acked, stats.unacked], [1, 1, 0])
  })

  it('refuses unknown viewers (404), viewers who did not get the status (400), bad types (400), unknown statuses (404)', async () => {
    const outsider = emu.addContact({ number: '15551119999' })
    const status = (error: unknown) => (error instanceof EmulatorError ? error.status : 0)
    await assert.rejects(emu.sendGroupedReceipts(statusId, { viewers: ['15551118888'] }), (e) => status(e) === 404)
    await assert.rejects(emu.sendGroupedReceipts(statusId, { viewers: [outsider.number] }), (e) => status(e) === 400)
    await assert.rejects(emu.sendGroupedReceipts(statusId, { viewers: [{ viewer: viewers[0].number, type: 'seen' as never }] }), (e) => status(e) === 400)
    await assert.rejects(emu.sendGroupedReceipts(statusId, { viewers: [] }), (e) => status(e) === 400)
    await assert.rejects(emu.sendGroupedReceipts('NOPE', { viewers: [viewers[0].number] }), (e) => status(e) === 404)
    const forced = await emu.sendGroupedReceipts(statusId, { viewers: [outsider.number], force: true })
    assert.equal(forced.stanzas, 1)
  })
})
