import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { encodeWAMessage, getBinaryNodeChild, type BinaryNode, type WASocket } from '@whiskeysockets/baileys'
import { endSocket, linkWithQr, relayStatus, trustEmulatorRoot, unrefBaileysUploadTimer, waitForMessageAck } from '../src/baileys-helpers.js'
import { startEmulator, testCertPaths, type ContactInfo, type Emulator, type StatusRecord } from '../src/index.js'

// Status retry receipts (README "Rules": status retry receipts): a device told to fail sends the poster a retry
// receipt shaped as rc14's sendRetryRequest (keys from the second retry, whatsapp-rust MIN_RETRY_COUNT_FOR_KEYS);
// an answer is recorded and checked against WA Web's (whatsapp-rust src/retry.rs retransmit_status_message):
// to status@broadcast with an SKDM for the device. rc14's own answer (pairwise, to the device) is a violation
// and, strict, not read as the status.

const STATUS = 'status@broadcast'
const OWN = '15557770001'
const newId = (): string => `3EB0${randomBytes(9).toString('hex').toUpperCase()}`
const lidJid = (lid: string): string => `${lid}@lid`

describe('status retry receipts', () => {
  let emu: Emulator
  let sock: WASocket
  let ownLid: string
  let alice: ContactInfo
  let bob: ContactInfo
  /** statuses whose retry receipts rc14 answers itself (the others are held back from it, answered by hand) */
  const rc14Answers = new Set<string>()
  const receipts: BinaryNode[] = []

  const post = async (text: string, audience: string[], answerable = true): Promise<string> => {
    const id = newId()
    const acked = waitForMessageAck(sock, () => id)
    if (answerable) rc14Answers.add(id)
    await relayStatus(sock, { text }, { statusJidList: [lidJid(ownLid), ...audience], statusSetting: 'allowlist', messageId: id })
    assert.equal((await acked).error, undefined)
    return id
  }

  /** WA Web's answer, built by hand: the status to status@broadcast, an SKDM for `device` only (or none) */
  const answerHandBuilt = async (id: string, text: string, device: string, withSkdm: boolean): Promise<void> => {
    const { ciphertext, senderKeyDistributionMessage } = await sock.signalRepository.encryptGroupMessage({
      group: STATUS, data: encodeWAMessage({ extendedTextMessage: { text } }), meId: sock.user!.lid!
    })
    const participants: BinaryNode[] = []
    if (withSkdm) {
      await sock.assertSessions([device], false)
      const skdm = encodeWAMessage({ senderKeyDistributionMessage: { groupId: STATUS, axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage } })
      const { type, ciphertext: enc } = await sock.signalRepository.encryptMessage({ jid: device, data: skdm })
      participants.push({ tag: 'to', attrs: { jid: device }, content: [{ tag: 'enc', attrs: { v: '2', type }, content: enc }] })
    } else {
      participants.push({ tag: 'to', attrs: { jid: device } })
    }
    const acked = waitForMessageAck(sock, () => id)
    await sock.sendNode({ tag: 'message', attrs: { to: STATUS, id, type: 'text' }, content: [{ tag: 'participants', attrs: {}, content: participants }, { tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: ciphertext }] })
    assert.equal((await acked).error, undefined, 'the answer has no <meta> and is accepted')
  }

  const answered = async (id: string, n = 1): Promise<StatusRecord> => {
    await emu.waitForStatus((s) => s.id === id && s.retries.length >= n && s.retries.slice(0, n).every((r) => r.answered), 10_000)
    await emu.settled()
    return emu.status(id)
  }

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    ownLid = emu.createAccount(OWN).lid
    alice = emu.addContact({ number: '15557770011' })
    bob = emu.addContact({ number: '15557770012', devices: 2 })
    ;({ sock } = await linkWithQr(emu, OWN))
    sock.ws.on('frame', (frame: BinaryNode | Uint8Array) => {
      if (frame instanceof Uint8Array || frame.tag !== 'receipt' || frame.attrs.type !== 'retry') return
      receipts.push({ ...frame })
      // renamed before rc14 dispatches it (it reads the tag after the 'frame' listeners): rc14 never sees it
      if (!rc14Answers.has(frame.attrs.id)) frame.tag = 'receipt-held'
    })
  })

  after(async () => {
    await endSocket(sock)
    await emu.stop()
  })

  it("rc14's answer to a companion (pairwise, to the device itself) is recorded as a violation, not read as the status, and the device cannot view it", async () => {
    emu.failNextDecrypt(bob.number, { device: 1 })
    const id = await post('rc14 answers', [lidJid(bob.lid)])
    const record = await answered(id)
    const [retry] = record.retries
    const device = `${bob.lid}:1@lid`
    assert.equal(retry.requester, device)
    assert.equal(retry.answeredTo, device, 'rc14 relays it to the device')
    assert.equal(retry.decrypted, false)
    assert.equal(retry.violations.length, 1)
    assert.match(retry.violations[0], /not to status@broadcast/)
    assert.ok(record.deliveries.some((d) => d.number === bob.number && d.device === 0 && d.decrypted), 'its phone read it')
    // the receipt as the poster got it: <retry count id t v="1"/> and <registration>, no keys on a first retry
    const receipt = receipts.find((r) => r.attrs.id === id)!
    assert.deepEqual({ from: receipt.attrs.from, participant: receipt.attrs.participant, type: receipt.attrs.type }, { from: STATUS, participant: device, type: 'retry' })
    const retryNode = getBinaryNodeChild(receipt, 'retry')!
    assert.deepEqual([retryNode.attrs.count, retryNode.attrs.id, retryNode.attrs.v], ['1', id, '1'])
    assert.ok(retryNode.attrs.t !== undefined)
    assert.equal((getBinaryNodeChild(receipt, 'registration')?.content as Uint8Array).length, 4)
    assert.equal(getBinaryNodeChild(receipt, 'keys'), undefined)
  })

  it("WA Web's answer (to status@broadcast, an SKDM for the device) is read; one without an SKDM is a violation and unreadable", async () => {
    const text = 'WA Web answers'
    const id = await post(text, [lidJid(alice.lid), lidJid(bob.lid)], false)
    await emu.settled()
    emu.requestStatusRetry(id, { number: alice.number })
    emu.requestStatusRetry(id, { number: bob.number, device: 1, via: 'pn' })
    await waitForReceipts(id, 2)
    await answerHandBuilt(id, text, lidJid(alice.lid), true)
    await answerHandBuilt(id, text, `${bob.lid}:1@lid`, false)
    const record = await answered(id, 2)
    const [a, b] = record.retries
    assert.deepEqual([a.answeredTo, a.skdm, a.decrypted, a.violations], [STATUS, true, true, []])
    assert.deepEqual([b.requester, b.answeredTo, b.skdm, b.decrypted], [`${bob.number}:1@s.whatsapp.net`, STATUS, false, false])
    assert.match(b.violations[0], /no sender key distribution message/)
    assert.ok(record.deliveries.some((d) => d.number === alice.number && d.resend === true && d.decrypted))
    await emu.sendView(id, { viewer: alice.number })
  })

  it('a viewer none of whose devices could read the status (its retry unanswered) cannot view it', async () => {
    emu.failNextDecrypt(alice.number)
    const id = await post('never answered', [lidJid(alice.lid)], false)
    await waitForReceipts(id, 1)
    await emu.settled()
    await assert.rejects(emu.sendView(id, { viewer: alice.number }), /could not decrypt/)
  })

  it('a second retry of the same message carries <keys> (type, identity, key, skey)', async () => {
    const id = await post('keys', [lidJid(alice.lid)], false)
    await emu.settled()
    emu.requestStatusRetry(id, { number: alice.number })
    emu.requestStatusRetry(id, { number: alice.number })
    const [, second] = await waitForReceipts(id, 2)
    assert.equal(getBinaryNodeChild(second, 'retry')?.attrs.count, '2')
    const keys = getBinaryNodeChild(second, 'keys')
    assert.deepEqual((keys?.content as BinaryNode[]).map((c) => c.tag), ['type', 'identity', 'skey', 'key'])
  })

  it('refuses bad fail-decrypt options and a retry for a device that never got the status', () => {
    assert.throws(() => emu.failNextDecrypt(alice.number, { times: 6 }), /times must be/)
    assert.throws(() => emu.failNextDecrypt(alice.number, { device: 3 }), /has no device 3/)
    assert.throws(() => emu.failNextDecrypt(alice.number, { via: 'x' as 'pn' }), /via must be/)
    const id = emu.statuses().find((s) => s.recipients.includes(alice.number) && !s.recipients.includes(bob.number))!.id
    assert.throws(() => emu.requestStatusRetry(id, { number: bob.number }), /did not receive status/)
  })

  it('control API: POST /contacts/:number/fail-decrypt, /statuses/:id/retry and /accounts/:number/devices', async () => {
    const call = async (path: string, body: Record<string, unknown>): Promise<{ status: number, json: Record<string, unknown> }> => {
      const response = await fetch(`${emu.controlUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      return { status: response.status, json: await response.json() as Record<string, unknown> }
    }
    assert.equal((await call(`/contacts/${alice.number}/fail-decrypt`, { times: 9 })).status, 400)
    assert.equal((await call(`/contacts/${alice.number}/fail-decrypt`, { via: 7 })).status, 400)
    const told = await call(`/contacts/${alice.number}/fail-decrypt`, { device: 0, statuses: 1, times: 1, via: 'lid' })
    assert.deepEqual([told.status, told.json.number], [200, alice.number])
    const id = emu.statuses().find((st) => st.recipients.includes(alice.number))!.id
    assert.equal((await call(`/statuses/${id}/retry`, {})).status, 400, 'number is required')
    const asked = await call(`/statuses/${id}/retry`, { number: alice.number })
    assert.deepEqual([asked.status, asked.json.requester, asked.json.answered], [200, lidJid(alice.lid), false])
    const own = await call(`/accounts/${OWN}/devices`, {})
    assert.equal(own.status, 201)
    assert.match(String(own.json.lidJid), new RegExp(`^${ownLid}:\\d+@lid$`))
  })

  async function waitForReceipts (id: string, n: number): Promise<BinaryNode[]> {
    for (let i = 0; i < 100; i++) {
      const found = receipts.filter((r) => r.attrs.id === id)
      if (found.length >= n) return found
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`${n} retry receipts for ${id} not received within 5 s`)
  }
})
