import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { buildAckStanza, type BaileysEventMap, type BinaryNode, type WASocket } from '@whiskeysockets/baileys'
import type { WebSocket } from 'ws'
import { AckLedger, newAckCounters } from '../src/acks.js'
import {
  connectUntilOpen,
  endSocket,
  linkWithQr,
  relayStatus,
  trustEmulatorRoot,
  unrefBaileysUploadTimer,
  waitForClose,
  waitForEvent
} from '../src/baileys-helpers.js'
import { startEmulator, testCertPaths, type ContactInfo, type Emulator } from '../src/index.js'

type ReceiptUpdate = BaileysEventMap['message-receipt.update'][number]

const OWN = '15556660000'
const ME = `${OWN}:1@s.whatsapp.net`
const jid = (number: string) => `${number}@s.whatsapp.net`

/** Poll `probe` until it holds (bounded). */
async function eventually (probe: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('ack ledger', () => {
  const receipt = (id: string, participant: string, type?: string, list?: string[]): BinaryNode => ({
    tag: 'receipt',
    attrs: { from: 'status@broadcast', participant, id, t: '1', ...(type ? { type } : {}) },
    content: list ? [{ tag: 'list', attrs: {}, content: list.map((i) => ({ tag: 'item', attrs: { id: i } })) }] : undefined
  })
  const message: BinaryNode = { tag: 'message', attrs: { from: '15550000001@s.whatsapp.net', id: 'M1', type: 'text', t: '1' } }

  it("matches Baileys' own acks (buildAckStanza) to receipts by PN and LID, <list> receipts and messages", () => {
    const ledger = new AckLedger()
    const conn = newAckCounters(1, 1)
    ledger.open(conn)
    const nodes = [
      receipt('S1', '15550000001@s.whatsapp.net', 'read'),
      receipt('S1', '100000000000001@lid', 'played'),
      receipt('S1', '15550000002@s.whatsapp.net'),
      receipt('S1', '15550000003@s.whatsapp.net', 'read', ['S2', 'S3']),
      message,
      { tag: 'ib', attrs: { from: 's.whatsapp.net' } }
    ]
    ledger.delivered(nodes, conn)
    assert.equal(ledger.size, 5)
    assert.equal(conn.delivered, 5)
    // the same status id from another viewer or with another type is another stanza
    assert.equal(ledger.ack(buildAckStanza(receipt('S1', '15550000009@s.whatsapp.net', 'read'), undefined, ME), conn), false)
    assert.equal(ledger.ack(buildAckStanza(receipt('S1', '15550000001@s.whatsapp.net', 'played'), undefined, ME), conn), false)
    for (const node of nodes.slice(0, 4).reverse()) assert.equal(ledger.ack(buildAckStanza(node, undefined, ME), conn), true)
    assert.equal(ledger.ack(buildAckStanza(message, 487, ME), conn), true)
    assert.equal(ledger.ack(buildAckStanza(message, undefined, ME), conn), false)
    assert.equal(ledger.size, 0)
    assert.deepEqual(
      { delivered: conn.delivered, acked: conn.acked, nacked: conn.nacked, unmatched: conn.unmatched, unacked: conn.unacked },
      { delivered: 5, acked: 5, nacked: 1, unmatched: 3, unacked: 0 }
    )
  })

  it('keeps what a connection left unacked and hands it to the next one, oldest first, the same stanza twice if sent twice', () => {
    const ledger = new AckLedger()
    const first = newAckCounters(1, 1)
    ledger.open(first)
    const a = receipt('S1', '15550000001@s.whatsapp.net', 'read')
    const b = receipt('S2', '15550000001@s.whatsapp.net', 'read')
    ledger.delivered([a, b, a], first)
    ledger.ack(buildAckStanza(b, undefined, ME), first)
    first.closedAt = new Date()
    const second = newAckCounters(2, 1)
    ledger.open(second)
    assert.deepEqual(ledger.redeliver(second), [a, a])
    assert.equal(first.unacked, 2, 'the closed connection keeps what it left unacked')
    assert.deepEqual([second.delivered, second.redelivered, second.unacked], [2, 2, 2])
    ledger.ack(buildAckStanza(a, undefined, ME), second)
    ledger.ack(buildAckStanza(a, undefined, ME), second)
    assert.deepEqual([ledger.size, second.unacked, second.acked], [0, 0, 2])
    assert.deepEqual(ledger.connections(), [first, second])
  })
})

describe('acks and redelivery through Baileys', () => {
  let emu: Emulator
  let sock: WASocket
  let auth: Awaited<ReturnType<typeof linkWithQr>>['auth']
  let viewers: ContactInfo[]
  let statusId = ''
  let secondId = ''

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    const own = emu.createAccount(OWN)
    viewers = emu.addContacts(4, { prefix: '1555666' })
    ;({ sock, auth } = await linkWithQr(emu, OWN))
    // LID-addressed posts with <meta status_setting> (relayMessage emits no own upsert to fold receipts into)
    const statusJidList = [own.lid, ...viewers.map((v) => v.lid)].map((lid) => `${lid}@lid`)
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

  it('receipts delivered to a connected client are acked: unacked goes back to 0', async () => {
    assert.equal(emu.unackedCount(OWN), 0)
    // Baileys merges updates for the same status and viewer that it buffers together: count pairs
    const seen = new Set<string>()
    const received = waitForEvent(sock, 'message-receipt.update', (updates) => {
      for (const u of updates) seen.add(`${u.key.id}|${u.receipt.userJid}`)
      return seen.size >= 8
    })
    const numbers = viewers.map((v) => v.number)
    await emu.sendViews(statusId, { viewers: numbers, type: 'read', via: 'pn' })
    await emu.sendViews(statusId, { viewers: numbers.slice(0, 2), type: 'played', via: 'lid' })
    await emu.sendViews(statusId, { viewers: numbers.slice(2), type: 'delivery', grouped: true, alsoStatusIds: [secondId] })
    await received
    await eventually(() => emu.unackedCount(OWN) === 0, 'unacked to reach 0')
    const [stats] = emu.ackStats(OWN)
    assert.equal(stats.connected, true)
    assert.equal(stats.device, 1)
    assert.deepEqual(
      {
        delivered: stats.delivered, acked: stats.acked, nacked: stats.nacked, unmatched: stats.unmatched, unacked: stats.unacked,
        redelivered: stats.redelivered
      },
      { delivered: 8, acked: 8, nacked: 0, unmatched: 0, unacked: 0, redelivered: 0 }
    )
  })

  it('a client killed before acking leaves them unacked; the same device gets the same receipts again at its next login', async () => {
    // kill the client's socket as soon as the first receipt of the burst is parsed: Baileys acks a
    // receipt only after handling it (asynchronously), so no ack of the burst leaves the process
    const raw = (sock.ws as unknown as { socket: WebSocket | null }).socket!
    const killed = new Promise<void>((resolve) => {
      sock.ws.once('CB:receipt', () => {
        raw.terminate()
        resolve()
      })
    })
    const closed = waitForClose(sock)
    const numbers = viewers.map((v) => v.number)
    await emu.sendViews(statusId, { viewers: numbers, type: 'played', via: 'lid' })
    await emu.sendViews(secondId, { viewers: numbers, type: 'read', via: 'pn' })
    await killed
    await closed
    await eventually(() => !emu.getAccount(OWN).connected, 'the emulator to see the close')
    const left = emu.unackedCount(OWN)
    assert.equal(left, 8, 'every receipt of the burst stays unacked')
    const lost = emu.ackStats(OWN).at(-1)!
    assert.deepEqual([lost.connected, lost.delivered, lost.acked, lost.unacked], [false, 16, 8, 8], 'the 8 acks of the test before, none of the burst')

    const seen: ReceiptUpdate[] = []
    const rawIds: string[] = []
    sock = await connectUntilOpen({
      wsUrl: emu.wsUrl,
      auth,
      onSocket: (s) => {
        s.ws.on('CB:receipt', (node: BinaryNode) => rawIds.push(`${node.attrs.id}|${node.attrs.participant}|${node.attrs.offline ?? ''}`))
        s.ev.on('message-receipt.update', (updates) => seen.push(...updates))
      }
    })
    await eventually(() => seen.length >= 8 && emu.unackedCount(OWN) === 0, 'redelivered receipts to be handled and acked')
    const expected = (id: string, via: 'pn' | 'lid') => viewers.map((v) => `${id}|${via === 'lid' ? `${v.lid}@lid` : jid(v.number)}`)
    const all = [...expected(statusId, 'lid'), ...expected(secondId, 'pn')]
    assert.deepEqual(rawIds, all.map((k) => `${k}|1`), 'same ids, same order, flagged offline')
    assert.deepEqual(seen.map((u) => `${u.key.id}|${u.receipt.userJid}`).sort(), [...all].sort())
    assert.ok(seen.every((u) => typeof u.receipt.readTimestamp === 'number'))
    const again = emu.ackStats(OWN).at(-1)!
    assert.equal(again.connected, true)
    assert.ok(again.connection > lost.connection)
    assert.deepEqual(
      { delivered: again.delivered, redelivered: again.redelivered, acked: again.acked, unmatched: again.unmatched, unacked: again.unacked },
      { delivered: 8, redelivered: 8, acked: 8, unmatched: 0, unacked: 0 }
    )
  })

  it('counts receipts queued for an offline device as unacked until the device acks them', async () => {
    await endSocket(sock)
    await eventually(() => !emu.getAccount(OWN).connected, 'the emulator to see the close')
    const result = await emu.sendViews(statusId, { viewers: [viewers[0].number], type: 'read' })
    assert.equal(result.queuedFor, 1)
    assert.equal(emu.unackedCount(OWN), 1)
    sock = await connectUntilOpen({ wsUrl: emu.wsUrl, auth })
    await eventually(() => emu.unackedCount(OWN) === 0, 'the queued receipt to be acked')
    const last = emu.ackStats(OWN).at(-1)!
    assert.deepEqual([last.delivered, last.redelivered, last.acked], [1, 0, 1])
  })

  it('unknown accounts are 404', () => {
    assert.throws(() => emu.unackedCount('15556669999'), (e: unknown) => (e as { status?: number }).status === 404)
    assert.throws(() => emu.ackStats('15556669999'), (e: unknown) => (e as { status?: number }).status === 404)
  })
})
