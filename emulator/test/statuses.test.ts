import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Agent } from 'node:https'
import { after, before, describe, it } from 'node:test'
import type { AnyMessageContent, WASocket } from '@whiskeysockets/baileys'
import sharp from 'sharp'
import { endSocket, linkWithQr, makeMemoryAuthState, relayStatus, trustEmulatorRoot, unrefBaileysUploadTimer, type RelayStatusOptions } from '../src/baileys-helpers.js'
import { startEmulator, testCertPaths, type Emulator, type StatusRecord } from '../src/index.js'

const OWN = '15552220000'
const ALICE = '15552220001'
const BOB = '15552220002' // two devices

const lidJid = (lid: string) => `${lid}@lid`
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('base64')

// The account is LID-migrated (the default): posts go out LID-addressed with <meta status_setting>
// through rc14's own stanza builder (relayStatus); see status-rules.test.ts for the rules themselves.
describe('statuses', () => {
  let emu: Emulator
  let sock: WASocket
  const auth = makeMemoryAuthState()
  const lid: Record<string, string> = {}
  let statusJidList: string[] = []

  const send = async (content: AnyMessageContent, options: Partial<RelayStatusOptions> = {}): Promise<StatusRecord> => {
    const id = await relayStatus(sock, content, { statusJidList, ...options })
    const record = await emu.waitForStatus((s) => s.id === id, 10_000)
    assert.equal(record.rejected, undefined, JSON.stringify(record.rejected))
    return record
  }

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    lid[OWN] = emu.createAccount(OWN).lid
    lid[ALICE] = emu.addContact({ number: ALICE }).lid
    lid[BOB] = emu.addContact({ number: BOB, devices: 2 }).lid
    statusJidList = [OWN, ALICE, BOB].map((n) => lidJid(lid[n]))
    // media uploads go to https://127.0.0.1:<port>; the suite trusts the certificate via NODE_EXTRA_CA_CERTS
    const config = process.env.NODE_EXTRA_CA_CERTS ? {} : { fetchAgent: new Agent({ ca: readFileSync(emu.caFile) }) }
    ;({ sock } = await linkWithQr(emu, OWN, { config, auth }))
  })

  after(async () => {
    await endSocket(sock)
    await emu.stop()
  })

  it('decrypts a text status (background colour, font) on every recipient device, the own phone included', async () => {
    const record = await send({ text: 'hello from the emulator' }, { backgroundColor: '#336699', font: 3 })
    assert.equal(record.kind, 'post')
    assert.equal(record.statusSetting, 'contacts')
    assert.equal(record.type, 'text')
    assert.equal(record.text, 'hello from the emulator')
    assert.equal(record.backgroundArgb, 0xff336699)
    assert.equal(record.font, 3)
    assert.equal(record.from, OWN)
    assert.equal(record.fromDevice, 1)
    assert.deepEqual([...record.recipients].sort(), [OWN, ALICE, BOB].sort())
    const devices = record.deliveries.map((d) => `${d.number}:${d.device}`).sort()
    assert.deepEqual(devices, [`${ALICE}:0`, `${BOB}:0`, `${BOB}:1`, `${OWN}:0`].sort())
    assert.ok(record.deliveries.every((d) => d.decrypted), JSON.stringify(record.deliveries))
    assert.deepEqual(record.errors, [])
    assert.equal(record.chunks, 1)
    assert.deepEqual(record.duplicateRecipients, [])
  })

  it('keeps decrypting when the same contacts get more statuses (sessions continue)', async () => {
    for (const text of ['second', 'third']) {
      const record = await send({ text })
      assert.equal(record.text, text)
      assert.equal(record.deliveries.length, 4)
      assert.ok(record.deliveries.every((d) => d.decrypted))
    }
  })

  it('decrypts an image status and checks the uploaded media against its hash', async () => {
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#22aa44' } }).png().toBuffer()
    const uploadsBefore = emu.mediaUploads().length
    const record = await send({ image: png, caption: 'a green square', mimetype: 'image/png' })
    assert.equal(record.type, 'image')
    assert.equal(record.caption, 'a green square')
    assert.equal(record.media?.mimetype, 'image/png')
    assert.equal(record.media?.size, png.length)
    assert.equal(record.media?.sha256, sha256(png))
    assert.equal(record.media?.uploaded, true)
    assert.equal(record.media?.verified, true)
    assert.equal(emu.mediaUploads().length, uploadsBefore + 1)
    // the blob is served back at the returned path
    const upload = emu.mediaUploads().at(-1)!
    const response = await fetch(upload.url)
    assert.equal(response.status, 200)
    assert.equal(Buffer.from(await response.arrayBuffer()).length, upload.size)
  })

  it('decrypts a video status (no thumbnail without ffmpeg)', async () => {
    const video = randomBytes(4096)
    const record = await send({ video, caption: 'not really a movie' })
    assert.equal(record.type, 'video')
    assert.equal(record.caption, 'not really a movie')
    assert.equal(record.media?.mimetype, 'video/mp4')
    assert.equal(record.media?.sha256, sha256(video))
    assert.equal(record.media?.verified, true)
  })

  it('merges chunks sent under one message id and reports recipients addressed twice', async () => {
    const id = await relayStatus(sock, { text: 'chunked' }, { statusJidList: [lidJid(lid[OWN]), lidJid(lid[ALICE])] })
    await relayStatus(sock, { text: 'chunked' }, { statusJidList: [lidJid(lid[ALICE]), lidJid(lid[BOB])], messageId: id })
    const record = await emu.waitForStatus((s) => s.id === id && s.chunks === 2, 10_000)
    assert.deepEqual([...record.recipients].sort(), [OWN, ALICE, BOB].sort())
    assert.deepEqual(record.duplicateRecipients, [ALICE])
    assert.equal(record.text, 'chunked')
    assert.deepEqual(record.errors, [])
  })

  it('records a revoke and who received it', async () => {
    const id = (await send({ text: 'oops' })).id
    // a revoke carries no <meta status_setting> (status-rules.test.ts)
    await relayStatus(sock, { delete: { remoteJid: 'status@broadcast', fromMe: true, id } }, { statusJidList: [lidJid(lid[OWN]), lidJid(lid[ALICE])], statusSetting: null })
    const record = await emu.waitForStatus((s) => s.id === id && s.revoked === true, 10_000)
    assert.deepEqual([...(record.revokedFor ?? [])].sort(), [OWN, ALICE].sort())
    assert.ok(record.revokeMessageId && record.revokeMessageId !== record.id)
    assert.equal(emu.statuses().filter((s) => s.id === record.revokeMessageId).length, 0, 'a revoke is not a status')
  })
  it('a device that gets an id again under a Signal counter it already used drops it as a repeat, not an error', async () => {
    // no sender-key memory: the next post gives every device an SKDM in an <enc> of its own (a pkmsg here:
    // the device has never answered, so the session still carries its prekey)
    await auth.keys.set({ 'sender-key-memory': { 'status@broadcast': null } })
    const restore = auth.restorePoint()
    const audience = { statusJidList: [lidJid(lid[ALICE])] }
    const id = await relayStatus(sock, { text: 'sent twice' }, audience)
    await emu.waitForStatus((s) => s.id === id, 10_000)
    // the key store as it was before that send: a client killed after the stanza left, before its keys were
    // committed, comes back like this and encrypts the same id again under the counters it had already used
    restore()
    await relayStatus(sock, { text: 'sent twice' }, { ...audience, messageId: id })
    const record = await emu.waitForStatus((s) => s.id === id && s.chunks === 2, 10_000)
    const again = record.deliveries.filter((d) => d.chunk === 2 && d.number === ALICE)
    assert.deepEqual(again.map((d) => [d.encType, d.decrypted, d.error]), [['pkmsg', false, undefined]])
    assert.match(again[0].dropped ?? '', /Key used already or never filled/)
    assert.deepEqual(record.duplicateRecipients, [ALICE])
    assert.deepEqual(record.errors, [])

    // the same counters under an id the device never had: nothing was dropped, the post is lost to it
    restore()
    const fresh = await relayStatus(sock, { text: 'never arrives' }, audience)
    const lost = await emu.waitForStatus((s) => s.id === fresh, 10_000)
    assert.match(lost.errors.join('\n'), /decrypt failed: Key used already or never filled/)
    assert.deepEqual(lost.deliveries.map((d) => [d.number, d.decrypted, d.dropped]), [[ALICE, false, undefined]])
  })
})
