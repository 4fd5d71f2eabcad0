import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { Curve, encryptedStream, proto, toBuffer, WA_CERT_DETAILS } from '@whiskeysockets/baileys'
import * as libsignalCurve from 'libsignal/src/curve.js'
import QRCode from 'qrcode'
import { Directory, normalizeNumber } from '../src/accounts.js'
import { buildCertChain } from '../src/certs.js'
import { EmulatorError } from '../src/errors.js'
import { parseQr } from '../src/linking.js'
import { MediaServer } from '../src/media-server.js'
import { encodeFrame, FrameReader } from '../src/noise.js'
import { decodeQrDataUrl } from '../src/qr-image.js'
import { generateSigningKeyPair, xeddsaVerify } from '../src/xeddsa.js'

const withType = (key: Buffer) => Buffer.concat([Buffer.from([5]), key])

describe('XEdDSA keys', () => {
  it('signs what libsignal verifies, and verifies what libsignal signs', () => {
    const message = randomBytes(100)
    for (let i = 0; i < 20; i++) {
      const fast = generateSigningKeyPair()
      const signature = fast.sign(message)
      assert.equal(libsignalCurve.verifySignature(withType(fast.public), message, signature), true)
      assert.equal(xeddsaVerify(fast.public, message, signature), true)
      const slow = Curve.generateKeyPair()
      assert.equal(xeddsaVerify(slow.public, message, Curve.sign(slow.private, message)), true)
    }
  })

  it('rejects tampered messages, signatures and keys', () => {
    const pair = generateSigningKeyPair()
    const message = Buffer.from('status tracker')
    const signature = pair.sign(message)
    assert.equal(xeddsaVerify(pair.public, Buffer.from('status trackeR'), signature), false)
    const flipped = Buffer.from(signature)
    flipped[10] ^= 1
    assert.equal(xeddsaVerify(pair.public, message, flipped), false)
    assert.equal(xeddsaVerify(generateSigningKeyPair().public, message, signature), false)
    assert.equal(xeddsaVerify(pair.public, message, signature.subarray(0, 63)), false)
  })

  it('agrees on Diffie-Hellman with Baileys keys', () => {
    const ours = generateSigningKeyPair()
    const theirs = Curve.generateKeyPair()
    assert.deepEqual(Curve.sharedKey(ours.private, theirs.public), Curve.sharedKey(theirs.private, ours.public))
  })
})

describe('Noise certificate chain', () => {
  it('is signed by the root and binds the server static key', () => {
    const root = generateSigningKeyPair()
    const serverStatic = generateSigningKeyPair()
    const chain = proto.CertChain.decode(buildCertChain(root, serverStatic.public))
    const intermediate = proto.CertChain.NoiseCertificate.Details.decode(chain.intermediate!.details!)
    const leaf = proto.CertChain.NoiseCertificate.Details.decode(chain.leaf!.details!)
    assert.equal(intermediate.issuerSerial, WA_CERT_DETAILS.SERIAL)
    assert.ok(xeddsaVerify(root.public, chain.intermediate!.details!, chain.intermediate!.signature!))
    assert.ok(xeddsaVerify(intermediate.key!, chain.leaf!.details!, chain.leaf!.signature!))
    assert.deepEqual(Buffer.from(leaf.key!), serverStatic.public)
    assert.equal(xeddsaVerify(generateSigningKeyPair().public, chain.intermediate!.details!, chain.intermediate!.signature!), false)
  })
})

describe('framing', () => {
  it('reads frames split across messages after the plain or routing preamble', () => {
    const frames = [randomBytes(5), randomBytes(70_000), Buffer.alloc(0)]
    const wire = Buffer.concat([Buffer.from([0x57, 0x41, 6, 3]), ...frames.map((f) => encodeFrame(f))])
    const reader = new FrameReader()
    const out: Buffer[] = []
    for (let i = 0; i < wire.length; i += 1000) out.push(...reader.push(wire.subarray(i, i + 1000)))
    assert.deepEqual(out, frames)

    const routing = randomBytes(9)
    const routed = Buffer.concat([Buffer.from('ED\x00\x01', 'latin1'), Buffer.from([0, 0, 9]), routing, Buffer.from([0x57, 0x41, 6, 3]), encodeFrame(frames[0])])
    assert.deepEqual(new FrameReader().push(routed), [frames[0]])
    assert.throws(() => new FrameReader().push(Buffer.from('GET / HTTP/1.1')))
  })
})

describe('QR codes', () => {
  const qr = [
    'https://wa.me/settings/linked_devices#2@abcDEF==',
    randomBytes(32).toString('base64'),
    randomBytes(32).toString('base64'),
    randomBytes(32).toString('base64'),
    '1'
  ]

  it('parses the linking QR string with or without the URL prefix', () => {
    const parsed = parseQr(qr.join(','))
    assert.equal(parsed.ref, '2@abcDEF==')
    assert.equal(parsed.noiseKey.toString('base64'), qr[1])
    assert.equal(parsed.platform, '1')
    assert.equal(parseQr(qr.join(',').replace('https://wa.me/settings/linked_devices#', '')).ref, '2@abcDEF==')
    assert.throws(() => parseQr('hello'), EmulatorError)
    assert.throws(() => parseQr('ref,AAAA,AAAA,AAAA,1'), EmulatorError)
  })

  it('reads the QR back from a PNG data URL like a camera', async () => {
    const text = qr.join(',')
    assert.equal(decodeQrDataUrl(await QRCode.toDataURL(text)), text)
    assert.throws(() => decodeQrDataUrl('data:image/png;base64,AAAA'), EmulatorError)
  })
})

describe('directory', () => {
  it('validates numbers and hands out unique 15-digit LIDs', () => {
    assert.equal(normalizeNumber('+1 (555) 123-4567'), '15551234567')
    for (const bad of ['', '0123456789', '12', 'abc', '1234567890123456']) assert.throws(() => normalizeNumber(bad), EmulatorError)
    const directory = new Directory()
    directory.createAccount('15551234567')
    const contacts = directory.createContacts(500)
    const lids = [directory.account('15551234567').lid, ...contacts.map((c) => c.lid)]
    assert.equal(new Set(lids).size, lids.length)
    assert.ok(lids.every((lid) => /^\d{15}$/.test(lid)))
    assert.throws(() => directory.createContact('15551234567'), (e: unknown) => e instanceof EmulatorError && e.status === 409)
    assert.equal(directory.resolveDevice(contacts[0].lid, 'lid', 0)?.party, contacts[0])
    assert.equal(directory.resolveDevice(contacts[0].number, 's.whatsapp.net', 1), undefined)
  })

  it('hands out each one-time prekey once', () => {
    const contact = new Directory().createContact('15551234567', 2)
    const ids = Array.from({ length: 10 }, () => contact.devices[1].takeBundle().preKey!.keyId)
    assert.equal(new Set(ids).size, 10)
    const bundle = contact.devices[1].takeBundle()
    assert.ok(xeddsaVerify(bundle.identityKey, withType(bundle.signedPreKey.publicKey), bundle.signedPreKey.signature))
  })

  it('makes the keys of contacts created with publishKeys at creation, not on the first bundle fetch', () => {
    const directory = new Directory()
    const lazy = directory.createContacts(2, 2, '4471')
    assert.ok(lazy.every((c) => c.devices.every((d) => !d.hasKeys)))
    const published = directory.createContacts(2, 2, '4472', false, true)
    assert.ok(published.every((c) => c.devices.every((d) => d.hasKeys)))
    // the published one-time prekey is handed out first, then new ones are minted, each once
    const device = published[0].devices[1]
    const identity = device.identityKey
    const ids = Array.from({ length: 3 }, () => device.takeBundle().preKey!.keyId)
    assert.deepEqual(ids, [1, 2, 3])
    const bundle = device.takeBundle()
    assert.deepEqual(bundle.identityKey, identity)
    assert.ok(xeddsaVerify(bundle.identityKey, withType(bundle.signedPreKey.publicKey), bundle.signedPreKey.signature))
  })
})

describe('media', () => {
  it('decrypts what Baileys encrypts for upload and checks its MAC', async () => {
    const plaintext = randomBytes(10_000)
    const { encFilePath, mediaKey, fileSha256 } = await encryptedStream(plaintext, 'image')
    const { createReadStream } = await import('node:fs')
    const { rm } = await import('node:fs/promises')
    const body = await toBuffer(createReadStream(encFilePath))
    await rm(encFilePath, { force: true })
    const { plaintext: decrypted, macValid } = await MediaServer.decrypt(body, mediaKey, 'image')
    assert.equal(macValid, true)
    assert.deepEqual(decrypted, plaintext)
    assert.deepEqual(createHash('sha256').update(decrypted).digest(), Buffer.from(fileSha256))
    const tampered = Buffer.from(body)
    tampered[tampered.length - 1] ^= 1
    assert.equal((await MediaServer.decrypt(tampered, mediaKey, 'image')).macValid, false)
  })
})
