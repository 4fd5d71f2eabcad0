import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Agent } from 'node:https'
import { after, before, describe, it } from 'node:test'
import type { AnyMessageContent, MiscMessageGenerationOptions, WASocket } from '@whiskeysockets/baileys'
import sharp from 'sharp'
import { endSocket, linkWithQr, trustEmulatorRoot, unrefBaileysUploadTimer } from '../src/baileys-helpers.js'
import { startEmulator, testCertPaths, type Emulator, type StatusRecord } from '../src/index.js'

const OWN = '15552220000'
const ALICE = '15552220001'
const BOB = '15552220002' // two devices

const jid = (number: string) => `${number}@s.whatsapp.net`
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('base64')

describe('statuses', () => {
  let emu: Emulator
  let sock: WASocket
  const statusJidList = [jid(OWN), jid(ALICE), jid(BOB)]

  const send = async (content: AnyMessageContent, options: MiscMessageGenerationOptions = {}): Promise<StatusRecord> => {
    const sent = await sock.sendMessage('status@broadcast', content, { statusJidList, ...options })
    const id = sent?.key.id
    assert.ok(id)
    return emu.waitForStatus((s) => s.id === id, 10_000)
  }

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    emu.createAccount(OWN)
    emu.addContact({ number: ALICE })
    emu.addContact({ number: BOB, devices: 2 })
    // media uploads go to https://127.0.0.1:<port>; the suite trusts the certificate via NODE_EXTRA_CA_CERTS
    const config = process.env.NODE_EXTRA_CA_CERTS ? {} : { fetchAgent: new Agent({ ca: readFileSync(emu.caFile) }) }
    ;({ sock } = await linkWithQr(emu, OWN, { config }))
  })

  after(async () => {
    await endSocket(sock)
    await emu.stop()
  })

  it('decrypts a text status (background colour, font) on every recipient device, the own phone included', async () => {
    const record = await send({ text: 'hello from the emulator' }, { backgroundColor: '#336699', font: 3 })
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
    const first = await sock.sendMessage('status@broadcast', { text: 'chunked' }, { statusJidList: [jid(OWN), jid(ALICE)] })
    const id = first!.key.id!
    await sock.sendMessage('status@broadcast', { text: 'chunked' }, { statusJidList: [jid(ALICE), jid(BOB)], messageId: id })
    const record = await emu.waitForStatus((s) => s.id === id && s.chunks === 2, 10_000)
    assert.deepEqual([...record.recipients].sort(), [OWN, ALICE, BOB].sort())
    assert.deepEqual(record.duplicateRecipients, [ALICE])
    assert.equal(record.text, 'chunked')
    assert.deepEqual(record.errors, [])
  })

  it('records a revoke and who received it', async () => {
    const sent = await sock.sendMessage('status@broadcast', { text: 'oops' }, { statusJidList })
    const id = sent!.key.id!
    await emu.waitForStatus((s) => s.id === id)
    // the key object given to `delete` comes back carrying the revoke's own id (Baileys' own-event processing): pass a copy
    await sock.sendMessage('status@broadcast', { delete: { ...sent!.key } }, { statusJidList: [jid(OWN), jid(ALICE)] })
    const record = await emu.waitForStatus((s) => s.id === id && s.revoked === true, 10_000)
    assert.deepEqual([...(record.revokedFor ?? [])].sort(), [OWN, ALICE].sort())
    assert.ok(record.revokeMessageId && record.revokeMessageId !== record.id)
    assert.equal(emu.statuses().filter((s) => s.id === record.revokeMessageId).length, 0, 'a revoke is not a status')
  })

  it('turns numbers it has never heard of into contacts when the client asks for their devices', async () => {
    const stranger = '15552229999'
    const record = await send({ text: 'hi stranger' }, { statusJidList: [jid(OWN), jid(stranger)] })
    assert.deepEqual([...record.recipients].sort(), [OWN, stranger].sort())
    assert.ok(record.deliveries.every((d) => d.decrypted))
    assert.equal(emu.getContact(stranger).devices, 1)
  })
})
