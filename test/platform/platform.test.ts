import assert from 'node:assert/strict'
import { storesOf } from '../../src/db/stores/index.js'
import { writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import sharp from 'sharp'
import { startEmulator, testCertPaths, type Emulator } from '@status-tracker/emulator'
import type { StatusView } from '../../src/platform/types.js'
import {
  authRows,
  digitsOf,
  mediaTrusted,
  sessionRow,
  startPlatform,
  tempDb,
  waConfig,
  type PlatformUnderTest,
  type TempDb
} from './harness.js'
import { insertSession } from '../support/sessions.js'
import { waitFor } from '../support/wait.js'

// One emulator and one database for the whole file: the sessions linked first are reused by the
// tests that follow (restore, faults, sending, receipts), in order.

const OWN_PAIR = '15550001001'
const OWN_QR = '15550001002'
const PAIR = 'pair-1'
const QR = 'qr-1'
const PAIR2 = 'pair-2'
const skipMedia = !mediaTrusted() && 'needs NODE_EXTRA_CA_CERTS=test/.certs/cert.pem (npm test sets it)'

describe('platform (real Baileys against the emulator)', () => {
  let emu: Emulator
  let tmp: TempDb
  let p: PlatformUnderTest
  const platforms: PlatformUnderTest[] = []

  const open = (sessionId: string) => (e: { sessionId: string, status: string }) => e.sessionId === sessionId && e.status === 'open'

  before(async () => {
    emu = await startEmulator({ tls: testCertPaths() })
    tmp = await tempDb()
    p = startPlatform(tmp.db, waConfig(emu))
    platforms.push(p)
  })

  after(async () => {
    for (const x of platforms) await x.platform.close()
    await emu.stop()
    await tmp.close()
  })

  it('links by pairing code: event → code entered on the phone → open with the own number', async () => {
    const account = emu.createAccount(OWN_PAIR)
    await insertSession(tmp.db, PAIR, { authMethod: 'pairing', phoneNumber: OWN_PAIR })
    const since = p.events.mark()
    await p.platform.startSession({ sessionId: PAIR, authMethod: 'pairing', phoneNumber: OWN_PAIR })
    const first = await p.events.next('pairing-code', (e) => e.sessionId === PAIR, since)
    assert.match(first.pairingCode, /^[0-9A-Z]{8}$/)
    assert.equal(first.phoneNumber, OWN_PAIR)
    assert.equal(p.platform.snapshot(PAIR)?.pairingCode, first.pairingCode)

    // an explicit request issues a fresh code; a second one while it runs is refused
    const [fresh, busy] = await Promise.allSettled([p.platform.requestPairingCode(PAIR), p.platform.requestPairingCode(PAIR)])
    assert.equal(busy.status, 'rejected')
    assert.equal((busy as PromiseRejectedResult).reason.code, 'PAIRING_IN_PROGRESS')
    assert.equal(fresh.status, 'fulfilled')
    const code = (fresh as PromiseFulfilledResult<string>).value
    assert.match(code, /^[0-9A-Z]{8}$/)
    assert.notEqual(code, first.pairingCode)
    assert.equal(p.platform.snapshot(PAIR)?.pairingCode, code)

    await emu.enterCode(OWN_PAIR, code)
    const opened = await p.events.next('connection-status', open(PAIR), since)
    // the session links got the announcement with the row's write (the service logs it there), and the event says so
    assert.deepEqual(opened, { sessionId: PAIR, connected: true, status: 'open', ownNumber: OWN_PAIR, recorded: true })
    assert.deepEqual(p.handed.at(-1), { sessionId: PAIR, connected: true, status: 'open', ownNumber: OWN_PAIR })
    assert.deepEqual(p.platform.snapshot(PAIR), { sessionId: PAIR, connected: true, status: 'open', ownNumber: OWN_PAIR, pairingCode: null, qrCode: null })
    assert.deepEqual(sessionRow(tmp.db, PAIR), { linked: 1, own_number: OWN_PAIR, own_lid: `${account.lid}@lid` })
    const rows = authRows(tmp.db, PAIR)
    assert.equal(rows.creds, 1)
    assert.ok(rows.keys >= 812, `pre-keys stored in SQLite (${rows.keys} key rows)`)
    assert.equal(emu.getAccount(OWN_PAIR).linkedDevices.length, 1)
    await assert.rejects(p.platform.requestPairingCode(PAIR), { code: 'ALREADY_CONNECTED' })
    await assert.rejects(p.platform.requestPairingCode('nope'), { code: 'SESSION_NOT_FOUND' })
    assert.ok(p.logs.messages(40).some((m) => /certificate root is overridden/.test(m)), 'the test-only trust root is announced at warn')
  })

  it('links by QR: the phone scans the PNG data URL from the qr-code event', async () => {
    emu.createAccount(OWN_QR)
    await insertSession(tmp.db, QR)
    const since = p.events.mark()
    await p.platform.startSession({ sessionId: QR, authMethod: 'qrcode', phoneNumber: null })
    const { qrCode } = await p.events.next('qr-code', (e) => e.sessionId === QR, since)
    assert.match(qrCode, /^data:image\/png;base64,/)
    assert.equal(p.platform.snapshot(QR)?.qrCode, qrCode)
    await assert.rejects(p.platform.requestPairingCode(QR), { code: 'PHONE_NOT_SET' })
    await emu.scan(OWN_QR, qrCode)
    const opened = await p.events.next('connection-status', open(QR), since)
    assert.equal(opened.ownNumber, OWN_QR)
    assert.deepEqual(p.platform.snapshot(QR), { sessionId: QR, connected: true, status: 'open', ownNumber: OWN_QR, pairingCode: null, qrCode: null })
    assert.equal(p.events.all('pairing-code', (e) => e.sessionId === QR).length, 0)
  })

  it('updatePhoneNumber while pairing pushes a code for the new number, which links', async () => {
    const before = '15550001003'
    const after = '15550001004'
    emu.createAccount(after)
    await insertSession(tmp.db, PAIR2, { authMethod: 'pairing', phoneNumber: before })
    const since = p.events.mark()
    await p.platform.startSession({ sessionId: PAIR2, authMethod: 'pairing', phoneNumber: before })
    const first = await p.events.next('pairing-code', (e) => e.sessionId === PAIR2, since)
    assert.equal(first.phoneNumber, before)
    await p.platform.updatePhoneNumber(PAIR2, after)
    const next = await p.events.next('pairing-code', (e) => e.sessionId === PAIR2 && e.phoneNumber === after, since)
    assert.notEqual(next.pairingCode, first.pairingCode)
    await emu.enterCode(after, next.pairingCode)
    const opened = await p.events.next('connection-status', open(PAIR2), since)
    assert.equal(opened.ownNumber, after)
  })

  it('a new platform over the same database reconnects linked sessions without linking', async () => {
    await p.platform.close()
    const closedAt = p.events.mark()
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.equal(p.events.mark(), closedAt, 'no events and no reconnects after close')
    assert.equal(emu.getAccount(OWN_PAIR).connected, false)

    p = startPlatform(tmp.db, waConfig(emu))
    platforms.push(p)
    // what the session supervisor does at start (plugins/session-supervisor, paced): every stored session started
    const stored = await storesOf(tmp.db).sessions.stored()
    assert.equal(stored.length, 3)
    for (const s of stored) await p.platform.startSession({ sessionId: s.id, authMethod: s.authMethod, phoneNumber: s.phoneNumber })
    await p.events.next('connection-status', open(PAIR), 0)
    await p.events.next('connection-status', open(QR), 0)
    await p.events.next('connection-status', open(PAIR2), 0)
    assert.equal(p.events.all('pairing-code').length + p.events.all('qr-code').length, 0)
    assert.equal(emu.getAccount(OWN_PAIR).linkedDevices.length, 1, 'no second device was linked')
    assert.equal(p.platform.snapshot(PAIR)?.ownNumber, OWN_PAIR)
  })

  it('reconnects after a drop with a logged backoff, and at once after restart-required', async () => {
    const since = p.events.mark()
    const logSince = p.logs.lines.length
    emu.fault(OWN_PAIR, 'drop')
    const closed = await p.events.next('connection-status', (e) => e.sessionId === PAIR && e.status === 'close', since)
    assert.equal(closed.connected, false)
    await p.events.next('connection-status', open(PAIR), since)
    const warned = p.logs.lines.slice(logSince).find((l) => l.level === 40 && typeof l.delayMs === 'number')
    assert.ok(warned !== undefined, 'the reconnect delay was logged at warn')
    assert.ok((warned.delayMs as number) >= 300 && (warned.delayMs as number) <= 375, `first backoff is the base plus jitter (${String(warned.delayMs)})`)

    const since2 = p.events.mark()
    const logSince2 = p.logs.lines.length
    emu.fault(OWN_PAIR, 'restart-required')
    await p.events.next('connection-status', (e) => e.sessionId === PAIR && e.status === 'connecting', since2)
    await p.events.next('connection-status', open(PAIR), since2)
    assert.equal(p.logs.lines.slice(logSince2).filter((l) => typeof l.delayMs === 'number').length, 0, 'no backoff for 515')
    assert.equal(emu.getAccount(OWN_PAIR).linkedDevices[0].connected, true)
  })

  it('logout by the platform: logged-out event, auth cleared, and the session links again with a new code', async () => {
    const since = p.events.mark()
    emu.fault(OWN_PAIR, 'logout')
    const out = await p.events.next('connection-status', (e) => e.sessionId === PAIR && e.status === 'logged-out', since)
    assert.deepEqual(out, { sessionId: PAIR, connected: false, status: 'logged-out', ownNumber: null, reason: 'logged out', recorded: true })
    assert.deepEqual(p.handed.at(-1), { sessionId: PAIR, connected: false, status: 'logged-out', ownNumber: null, reason: 'logged out' })
    assert.deepEqual(authRows(tmp.db, PAIR), { creds: 0, keys: 0 })
    assert.deepEqual(sessionRow(tmp.db, PAIR), { linked: 0, own_number: null, own_lid: null })
    assert.equal(p.platform.snapshot(PAIR)?.status, 'logged-out')
    await assert.rejects(p.platform.sendStatus(PAIR, { messageId: 'X', content: { kind: 'text', text: 'x' }, recipients: [] }), { code: 'NOT_CONNECTED' })
    await new Promise((resolve) => setTimeout(resolve, 500))
    assert.equal(p.events.all('connection-status', (e) => e.sessionId === PAIR && e.status === 'connecting', since).length, 0, 'no reconnect after logout')

    const code = await p.platform.requestPairingCode(PAIR)
    await emu.enterCode(OWN_PAIR, code)
    await p.events.next('connection-status', open(PAIR), since)
    assert.equal(sessionRow(tmp.db, PAIR)?.linked, 1)
    assert.equal(emu.getAccount(OWN_PAIR).linkedDevices.length, 1)
  })

  let textStatus: { id: string, recipientJids: string[], contacts: string[] }

  it('sends a text status with background and font to contacts, own number first', async () => {
    const contacts = emu.addContacts(3).map((c) => c.number)
    const messageId = p.platform.newMessageId(PAIR)
    assert.match(messageId, /^3EB0[0-9A-F]{18}$/)
    const result = await p.platform.sendStatus(PAIR, {
      messageId,
      content: { kind: 'text', text: 'hello from the platform test', backgroundColor: '#336699', font: 2 },
      recipients: [...contacts, contacts[0], OWN_PAIR]
    })
    assert.equal(result.messageId, messageId)
    assert.deepEqual(result.recipientJids, [OWN_PAIR, ...contacts].map((n) => `${n}@s.whatsapp.net`))
    await emu.waitForStatus((s) => s.id === messageId)
    await emu.settled()
    const record = emu.status(messageId)
    assert.equal(record.type, 'text')
    assert.equal(record.text, 'hello from the platform test')
    assert.equal(record.backgroundArgb, 0xff336699)
    assert.equal(record.font, 2)
    assert.deepEqual(record.recipients, [OWN_PAIR, ...contacts])
    assert.equal(record.chunks, 1)
    assert.deepEqual(record.duplicateRecipients, [])
    assert.deepEqual(record.errors, [])
    textStatus = { id: messageId, recipientJids: result.recipientJids, contacts }
  })

  it('commits views by PN, by LID, grouped <list> receipts and own-device views before acking; deliveries are no views', async () => {
    const [c1, c2, c3] = textStatus.contacts
    const second = p.platform.newMessageId(PAIR)
    await p.platform.sendStatus(PAIR, { messageId: second, content: { kind: 'text', text: 'second' }, recipients: [c1, c2, c3] })
    await emu.waitForStatus((s) => s.id === second)
    await emu.settled()
    const since = p.sink.commits.length
    const stackLimit = Error.stackTraceLimit
    await emu.sendView(textStatus.id, { viewer: c1, via: 'pn' })
    await emu.sendView(textStatus.id, { viewer: c2, via: 'lid', type: 'played' })
    await emu.sendView(textStatus.id, { viewer: c3, via: 'lid', type: 'delivery' })
    await emu.sendView(textStatus.id, { viewer: OWN_PAIR, via: 'pn' })
    await emu.sendViews(textStatus.id, { viewers: [c3], via: 'lid', grouped: true, alsoStatusIds: [second] })

    const key = (r: Pick<StatusView, 'messageId' | 'viewerNumber' | 'type' | 'isOwn'>): string => `${r.messageId}|${r.viewerNumber}|${r.type}|${r.isOwn}`
    const want = [
      { messageId: textStatus.id, viewerNumber: c1, type: 'read', isOwn: false },
      { messageId: textStatus.id, viewerNumber: c2, type: 'played', isOwn: false },
      { messageId: textStatus.id, viewerNumber: OWN_PAIR, type: 'read', isOwn: true },
      { messageId: textStatus.id, viewerNumber: c3, type: 'read', isOwn: false },
      { messageId: second, viewerNumber: c3, type: 'read', isOwn: false }
    ] as const
    await waitFor(() => p.sink.views(PAIR, since).length >= want.length && emu.unackedCount(OWN_PAIR) === 0, 10_000, 'views committed and acked')
    const got = p.sink.views(PAIR, since)
    assert.deepEqual(got.map(key).sort(), want.map(key).sort())
    assert.equal(Error.stackTraceLimit, stackLimit, 'stack traces are whole again once the acks went (receipt-acks.ts, quietStacks)')
    // stanzas that arrive in one turn share a commit (receipt-turns.test.ts): never more than one per stanza
    assert.ok(p.sink.commits.length - since <= 4, `at most one commit per stanza with views (${p.sink.commits.length - since})`)
    const byLid = got.find((r) => r.viewerNumber === c2)
    assert.match(byLid?.viewerJid ?? '', /@lid$/, 'the LID the platform used is kept')
    assert.ok(got.every((r) => r.at > Date.now() - 60_000 && r.at <= Date.now() + 1000))
  })

  it('a commit that throws leaves the stanza unacknowledged: the socket is closed, and the stanza comes again and is committed', async () => {
    const [c1] = textStatus.contacts
    const acked = (): number => emu.ackStats(OWN_PAIR).reduce((n, c) => n + c.acked, 0)
    const ackedBefore = acked()
    const since = p.sink.commits.length
    const reopened = p.events.mark()
    p.sink.failNext = 1
    await emu.sendView(textStatus.id, { viewer: c1, via: 'pn', type: 'played' })
    await p.events.next('connection-status', (e) => e.sessionId === PAIR && e.status === 'close', reopened)
    assert.ok(emu.unackedCount(OWN_PAIR) >= 1, 'not acked')
    assert.equal(p.sink.views(PAIR, since).length, 0)
    await p.events.next('connection-status', open(PAIR), reopened)
    await waitFor(() => p.sink.views(PAIR, since).length === 1 && emu.unackedCount(OWN_PAIR) === 0, 10_000, 'the redelivered stanza committed and acked')
    assert.equal(p.sink.views(PAIR, since)[0].type, 'played')
    assert.equal(acked() - ackedBefore, 1, 'acked once, after the commit')
  })

  it('a view by a LID the client cannot map is committed with number null, then mapped when the platform reveals it', async () => {
    const stranger = emu.addContact({ number: '15550007777' })
    const since = p.sink.commits.length
    await emu.sendView(textStatus.id, { viewer: stranger.number, via: 'lid', force: true })
    await waitFor(() => p.sink.views(PAIR, since).length === 1, 10_000, 'the LID view committed')
    const [view] = p.sink.views(PAIR, since)
    assert.equal(view.viewerJid, `${stranger.lid}@lid`)
    assert.equal(view.viewerNumber, null)
    assert.deepEqual(await p.sink.unmappedLids(PAIR, 10), [view.viewerJid])
    emu.revealLid(stranger.number, { to: OWN_PAIR })
    await waitFor(() => p.sink.mapped.some((m) => m.lid === view.viewerJid), 10_000, 'the mapping handed to the sink')
    assert.deepEqual(p.sink.mapped.filter((m) => m.lid === view.viewerJid)[0], { sessionId: PAIR, lid: view.viewerJid, number: stranger.number })
    // later views by that LID are numbered at once
    const again = p.sink.commits.length
    await emu.sendView(textStatus.id, { viewer: stranger.number, via: 'lid', type: 'played', force: true })
    await waitFor(() => p.sink.views(PAIR, again).length === 1, 10_000, 'the second LID view committed')
    assert.equal(p.sink.views(PAIR, again)[0].viewerNumber, stranger.number)
  })

  it('a LID a later send maps (usync, no event) is found by the background look-up', async () => {
    const stranger = emu.addContact({ number: '15550007778' })
    const since = p.sink.commits.length
    await emu.sendView(textStatus.id, { viewer: stranger.number, via: 'lid', force: true })
    await waitFor(() => p.sink.views(PAIR, since).length === 1, 10_000, 'the LID view committed')
    const lid = `${stranger.lid}@lid`
    assert.equal(p.sink.views(PAIR, since)[0].viewerNumber, null)
    await new Promise((resolve) => setTimeout(resolve, 400)) // a look-up pass or two find nothing yet
    assert.ok(!p.sink.mapped.some((m) => m.lid === lid))
    await p.platform.sendStatus(PAIR, { messageId: p.platform.newMessageId(PAIR), content: { kind: 'text', text: 'to the stranger' }, recipients: [stranger.number] })
    await waitFor(() => p.sink.mapped.some((m) => m.lid === lid), 10_000, 'the mapping found by the look-up')
    assert.deepEqual(p.sink.mapped.find((m) => m.lid === lid), { sessionId: PAIR, lid, number: stranger.number })
  })

  it('a status the platform refuses (bad ack 479) fails its send with the code; the error ack is reported as met by the send', async () => {
    emu.fault(OWN_PAIR, 'reject-next-status')
    const since = p.events.mark()
    const messageId = p.platform.newMessageId(PAIR)
    const refused = p.platform.sendStatus(PAIR, { messageId, content: { kind: 'text', text: 'will be rejected' }, recipients: [textStatus.contacts[0]] })
    await assert.rejects(refused, (err: Error & { code?: string }) => err.code === 'SEND_FAILED' && /refused status chunk 1\/1 \(error 479\)/.test(err.message))
    const rejected = await p.events.next('status-error', (e) => e.sessionId === PAIR, since)
    assert.deepEqual(rejected, { sessionId: PAIR, messageId, error: '479', inSend: true })
  })

  it('revokes a status for its original recipients', async () => {
    assert.equal(await p.platform.revokeStatus(PAIR, textStatus.id, textStatus.recipientJids), true)
    const record = await emu.waitForStatus((s) => s.id === textStatus.id && s.revoked === true, 10_000)
    assert.deepEqual([...(record.revokedFor ?? [])].sort(), textStatus.recipientJids.map(digitsOf).sort())
  })

  it('sends image and video statuses from local files, uploading each once', { skip: skipMedia }, async () => {
    const png = join(tmp.dir, 'tiny.png')
    const mp4 = join(tmp.dir, 'clip.mp4')
    writeFileSync(png, await sharp({ create: { width: 64, height: 48, channels: 3, background: '#00aa55' } }).png().toBuffer())
    writeFileSync(mp4, Buffer.concat([Buffer.from('000000186674797069736f6d', 'hex'), Buffer.alloc(4096, 7)]))
    const contact = textStatus.contacts[1]
    for (const [kind, path, mimetype] of [['image', png, 'image/png'], ['video', mp4, 'video/mp4']] as const) {
      const uploads = emu.mediaUploads().length
      const messageId = p.platform.newMessageId(PAIR)
      await p.platform.sendStatus(PAIR, { messageId, content: { kind, source: { path }, caption: `a ${kind}` }, recipients: [contact] })
      await emu.waitForStatus((s) => s.id === messageId)
      await emu.settled()
      const record = emu.status(messageId)
      assert.equal(record.type, kind)
      assert.equal(record.caption, `a ${kind}`)
      assert.equal(record.media?.mimetype, mimetype)
      assert.equal(record.media?.uploaded, true)
      assert.equal(record.media?.verified, true)
      assert.equal(emu.mediaUploads().length, uploads + 1)
    }
  })

  it('sends an image status straight from a URL (fetched and uploaded once)', { skip: skipMedia }, async (t) => {
    const png = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#aa0000' } }).png().toBuffer()
    const hits: string[] = []
    const server = createServer((req, res) => {
      hits.push(req.url ?? '')
      res.writeHead(200, { 'content-type': 'image/png' }).end(png)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    t.after(async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)) })
    const { port } = server.address() as AddressInfo
    const uploads = emu.mediaUploads().length
    const messageId = p.platform.newMessageId(PAIR)
    await p.platform.sendStatus(PAIR, {
      messageId,
      content: { kind: 'image', source: { url: `http://127.0.0.1:${port}/media/pic.png?size=40` }, caption: 'from a URL' },
      recipients: [textStatus.contacts[2]]
    })
    await emu.waitForStatus((s) => s.id === messageId)
    await emu.settled()
    const record = emu.status(messageId)
    assert.equal(record.type, 'image')
    assert.equal(record.caption, 'from a URL')
    assert.equal(record.media?.mimetype, 'image/png')
    assert.equal(record.media?.verified, true)
    assert.deepEqual(hits, ['/media/pic.png?size=40'])
    assert.equal(emu.mediaUploads().length, uploads + 1)
  })

  it('relays 600 recipients in chunks of 256 under one id: each once, own number first, one upload', { skip: skipMedia }, async () => {
    const contacts = emu.addContacts(600).map((c) => c.number)
    const png = join(tmp.dir, 'many.png')
    writeFileSync(png, await sharp({ create: { width: 32, height: 32, channels: 3, background: '#123456' } }).png().toBuffer())
    const uploads = emu.mediaUploads().length
    const messageId = p.platform.newMessageId(PAIR)
    const progress: Array<[number, number]> = []
    const result = await p.platform.sendStatus(PAIR, {
      messageId,
      content: { kind: 'image', source: { path: png } },
      recipients: contacts,
      onChunk: async (_jids, step) => { if (step !== null) progress.push([step.sent, step.total]) }
    })
    assert.deepEqual(progress, [[256, 601], [512, 601], [601, 601]])
    assert.equal(result.recipientJids.length, 601)
    assert.equal(result.recipientJids[0], `${OWN_PAIR}@s.whatsapp.net`)
    await emu.waitForStatus((s) => s.id === messageId && s.chunks === 3, 30_000)
    await emu.settled(30_000)
    const record = emu.status(messageId)
    assert.equal(record.chunks, 3)
    assert.equal(record.recipients.length, 601)
    assert.deepEqual(new Set(record.recipients), new Set([OWN_PAIR, ...contacts]))
    assert.deepEqual(record.duplicateRecipients, [])
    assert.deepEqual(record.errors, [])
    assert.ok(record.deliveries.filter((d) => d.number === OWN_PAIR).every((d) => d.chunk === 1), 'own number in the first chunk')
    assert.equal(emu.mediaUploads().length, uploads + 1)
  })

  it('removeSession logs the device out on the platform and deletes its auth rows', async () => {
    assert.equal(emu.getAccount(OWN_QR).linkedDevices.length, 1)
    await p.platform.removeSession(QR)
    // Baileys' logout writes remove-companion-device and closes without waiting for an answer
    await waitFor(() => emu.getAccount(OWN_QR).linkedDevices.length === 0, 5000, 'the emulator to drop the device')
    assert.deepEqual(authRows(tmp.db, QR), { creds: 0, keys: 0 })
    assert.equal(p.platform.snapshot(QR), null)
    await assert.rejects(p.platform.restartSession(QR), { code: 'SESSION_NOT_FOUND' })
  })
})
