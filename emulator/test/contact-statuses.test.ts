import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { decryptMessageNode, downloadMediaMessage, type BinaryNode, type WAMessage, type WASocket } from '@whiskeysockets/baileys'
import { pino } from 'pino'
import { connectUntilOpen, endSocket, linkWithQr, trustEmulatorRoot, unrefBaileysUploadTimer, waitForClose, type MemoryAuthState } from '../src/baileys-helpers.js'
import { startEmulator, testCertPaths, type ContactInfo, type Emulator } from '../src/index.js'

const DEADLINE_MS = 1500
const silent = pino({ level: 'silent' })

/** The next `<status>` stanza the socket receives (Baileys rc14 registers no handler for the tag: this only listens). */
function nextStatusStanza (sock: WASocket, id?: () => string, timeoutMs = 10_000): Promise<BinaryNode> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { sock.ws.off('CB:status', listener); reject(new Error('no <status> stanza arrived')) }, timeoutMs)
    const listener = (node: BinaryNode): void => {
      if (id !== undefined && node.attrs.id !== id()) return
      clearTimeout(timer)
      sock.ws.off('CB:status', listener)
      resolve(node)
    }
    sock.ws.on('CB:status', listener)
  })
}

/** Decrypts a `<status>` stanza with Baileys' own message decryption, as WA Web retags it to `message`. */
async function decrypt (sock: WASocket, node: BinaryNode): Promise<WAMessage> {
  const me = sock.authState.creds.me!
  const { fullMessage, decrypt: run } = decryptMessageNode({ ...node, tag: 'message' }, me.id, me.lid ?? '', sock.signalRepository, silent)
  await run()
  return fullMessage as WAMessage
}

// Contacts' statuses arrive as top-level <status> stanzas owed an <ack class="status"> (oxidezap/whatsapp-rust
// PR #1101, tulir/whatsmeow a2381054); unacked past the deadline, the stream is ended and the stanza redelivered.
describe("contacts' statuses as <status> stanzas", () => {
  let emu: Emulator
  let alice: ContactInfo

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths(), statusAckDeadlineMs: DEADLINE_MS })
    trustEmulatorRoot(emu.rootPublicKey)
    alice = emu.addContact({ number: '15553330001' })
  })

  after(async () => { await emu.stop() })

  it('a client that does not ack (bare rc14) gets the stream error after the deadline and the stanza again at its next login', async () => {
    const OWN = '15553330100'
    emu.createAccount(OWN)
    const { sock, auth } = await linkWithQr(emu, OWN)
    let sock2: WASocket | undefined
    try {
      let id = ''
      const arrived = nextStatusStanza(sock, () => id)
      const closed = waitForClose(sock, DEADLINE_MS + 8000)
      const posted = await emu.postContactStatus(OWN, { from: alice.number, text: 'never acked' })
      id = posted.id
      assert.equal(posted.deliveredTo, 1)
      const stanza = await arrived
      assert.equal(stanza.attrs.from, 'status@broadcast')
      assert.equal(stanza.attrs.participant, `${alice.lid}@lid`)
      assert.equal(stanza.attrs.type, 'text')
      assert.deepEqual((stanza.content as BinaryNode[]).map((e) => e.attrs.type), ['pkmsg', 'skmsg'])
      // real Baileys decrypts it (pkmsg with the sender key distribution, then the skmsg)
      assert.equal((await decrypt(sock, stanza)).message?.extendedTextMessage?.text, 'never acked')
      // not before the deadline
      await sleep(DEADLINE_MS / 2)
      assert.equal(emu.contactStatusLog(OWN).streamErrors.length, 0)
      await closed
      const log = emu.contactStatusLog(OWN)
      assert.equal(log.streamErrors.length, 1)
      assert.deepEqual(log.streamErrors[0].ack, { class: 'status', id, to: 'status@broadcast', participant: `${alice.lid}@lid`, type: 'text' })
      assert.equal(log.statuses[0].deliveries[0].acked, false)

      // the next login gets it again, flagged offline, same id
      let again: Promise<BinaryNode> | undefined
      sock2 = await connectUntilOpen({ wsUrl: emu.wsUrl, auth: auth as MemoryAuthState, onSocket: (s) => { again = nextStatusStanza(s, () => id) } })
      const redelivered = await again!
      assert.equal(redelivered.attrs.offline, '1')
      const delivery = emu.contactStatusLog(OWN).statuses[0].deliveries[0]
      assert.equal(delivery.redelivered, 1)
      assert.equal(delivery.delivered, 2)
    } finally {
      await endSocket(sock2)
      await endSocket(sock).catch(() => {})
    }
  })

  it('a client that acks with class="status" is left alone; later posts carry only the skmsg; media decrypts and downloads', async () => {
    const OWN = '15553330200'
    emu.createAccount(OWN)
    const { sock } = await linkWithQr(emu, OWN)
    const texts: string[] = []
    let media: WAMessage | undefined
    const handled: Array<Promise<void>> = []
    let chain: Promise<unknown> = Promise.resolve()
    // what the service does (WA Web's way): decrypt through Baileys' pipeline, in arrival order (a later skmsg
    // needs the sender key an earlier pkmsg distributed: whatsapp-rust PR #1101 keeps them inline), then ack class="status"
    sock.ws.on('CB:status', (node: BinaryNode) => {
      handled.push((chain = chain.then(async () => {
        const msg = await decrypt(sock, node)
        if (msg.message?.extendedTextMessage?.text) texts.push(msg.message.extendedTextMessage.text)
        if (msg.message?.imageMessage) media = msg
        const { id, from, participant, type } = node.attrs
        await sock.sendNode({ tag: 'ack', attrs: { class: 'status', id, to: from, participant, type, from: sock.authState.creds.me!.id } })
      })) as Promise<void>)
    })
    let closedEarly = false
    sock.ev.on('connection.update', (u) => { if (u.connection === 'close') closedEarly = true })
    try {
      const first = await emu.postContactStatus(OWN, { from: alice.number, text: 'one' })
      const second = await emu.postContactStatus(OWN, { from: alice.number, text: 'two' })
      const third = await emu.postContactStatus(OWN, { from: alice.number, media: { mimetype: 'image/jpeg', size: 3000, caption: 'pic' } })
      await sleep(DEADLINE_MS + 1000)
      await Promise.all(handled)
      assert.equal(closedEarly, false)
      assert.deepEqual(texts, ['one', 'two'])
      const log = emu.contactStatusLog(OWN)
      assert.equal(log.streamErrors.length, 0)
      assert.deepEqual(log.unmatchedAcks, [])
      assert.deepEqual(log.statuses.map((s) => s.id), [first.id, second.id, third.id])
      assert.deepEqual(log.statuses.map((s) => s.deliveries[0].encTypes), [['pkmsg', 'skmsg'], ['skmsg'], ['skmsg']])
      for (const s of log.statuses) {
        const [d] = s.deliveries
        assert.equal(d.acked, true)
        assert.equal(d.redelivered, 0)
        assert.deepEqual(d.ack, { class: 'status', id: s.id, to: 'status@broadcast', participant: `${alice.lid}@lid`, type: s.type, from: sock.authState.creds.me!.id })
      }
      assert.equal(emu.unackedCount(OWN), 0)
      assert.equal(media?.message?.imageMessage?.caption, 'pic')
      const bytes = await downloadMediaMessage(media!, 'buffer', {})
      assert.equal(bytes.length, 3000)
    } finally {
      await endSocket(sock)
    }
  })

  it('the control API posts a status and reads the log; bad input is a 400 naming the field', async () => {
    const OWN = '15553330300'
    emu.createAccount(OWN)
    const post = await fetch(`${emu.controlUrl}/accounts/${OWN}/contact-statuses`, { method: 'POST', body: JSON.stringify({ from: alice.number, text: 'queued' }) })
    assert.equal(post.status, 200)
    const result = await post.json() as { id: string, deliveredTo: number, queuedFor: number }
    // no linked device: nothing to deliver to
    assert.deepEqual({ deliveredTo: result.deliveredTo, queuedFor: result.queuedFor }, { deliveredTo: 0, queuedFor: 0 })
    const log = await (await fetch(`${emu.controlUrl}/accounts/${OWN}/contact-statuses`)).json() as { statuses: Array<{ id: string, text: string }>, ackDeadlineMs: number }
    assert.equal(log.statuses[0].id, result.id)
    assert.equal(log.statuses[0].text, 'queued')
    assert.equal(log.ackDeadlineMs, DEADLINE_MS)
    const bad = await fetch(`${emu.controlUrl}/accounts/${OWN}/contact-statuses`, { method: 'POST', body: JSON.stringify({ from: alice.number }) })
    assert.equal(bad.status, 400)
    assert.match((await bad.json() as { error: string }).error, /text or media/)
    const deadline = await fetch(`${emu.controlUrl}/settings/status-ack-deadline`, { method: 'PUT', body: JSON.stringify({ ms: 0 }) })
    assert.equal(deadline.status, 400)
  })
})
