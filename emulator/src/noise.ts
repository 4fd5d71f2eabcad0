/**
 * Server side of WhatsApp Web's Noise_XX_25519_AESGCM_SHA256 handshake and frame transport,
 * mirroring Baileys' Utils/noise-handler.js (the client side).
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync } from 'node:crypto'
import { Curve, NOISE_MODE, NOISE_WA_HEADER, proto } from '@whiskeysockets/baileys'
import { generateX25519KeyPair, type KeyPair } from './xeddsa.js'

const EMPTY = Buffer.alloc(0)
const GCM_TAG = 16
/** Routing-info preamble a client sends instead of the bare header when its creds carry `routingInfo`. */
const EDGE_ROUTING_MAGIC = Buffer.from('ED\x00\x01', 'latin1')

function sha256 (data: Uint8Array): Buffer {
  return createHash('sha256').update(data).digest()
}

function ivFor (counter: number): Buffer {
  const iv = Buffer.alloc(12)
  iv.writeUInt32BE(counter >>> 0, 8)
  return iv
}

export function aesGcmEncrypt (key: Uint8Array, iv: Uint8Array, aad: Uint8Array, plaintext: Uint8Array): Buffer {
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(aad)
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()])
}

export function aesGcmDecrypt (key: Uint8Array, iv: Uint8Array, aad: Uint8Array, data: Uint8Array): Buffer {
  if (data.length < GCM_TAG) {
    throw new Error('ciphertext shorter than the GCM tag')
  }
  const decipher = createDecipheriv('aes-256-gcm', key, iv)
  decipher.setAAD(aad)
  decipher.setAuthTag(data.subarray(data.length - GCM_TAG))
  return Buffer.concat([decipher.update(data.subarray(0, data.length - GCM_TAG)), decipher.final()])
}

export function hkdf (ikm: Uint8Array, length: number, salt: Uint8Array = EMPTY, info = ''): Buffer {
  return Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from(info), length))
}

/** Symmetric state during the handshake (hash, chaining key, cipher key, nonce). */
class HandshakeState {
  private hash: Buffer
  private salt: Buffer
  private key: Buffer
  private counter = 0

  constructor () {
    const mode = Buffer.from(NOISE_MODE)
    this.hash = mode.length === 32 ? mode : sha256(mode)
    this.salt = this.hash
    this.key = this.hash
  }

  authenticate (data: Uint8Array): void {
    this.hash = sha256(Buffer.concat([this.hash, data]))
  }

  mixIntoKey (data: Uint8Array): void {
    const out = hkdf(data, 64, this.salt)
    this.salt = out.subarray(0, 32)
    this.key = out.subarray(32)
    this.counter = 0
  }

  encrypt (plaintext: Uint8Array): Buffer {
    const ct = aesGcmEncrypt(this.key, ivFor(this.counter++), this.hash, plaintext)
    this.authenticate(ct)
    return ct
  }

  decrypt (ciphertext: Uint8Array): Buffer {
    const pt = aesGcmDecrypt(this.key, ivFor(this.counter++), this.hash, ciphertext)
    this.authenticate(ciphertext)
    return pt
  }

  split (): NoiseTransport {
    const out = hkdf(EMPTY, 64, this.salt)
    // the client encrypts with the first half and decrypts with the second; the server mirrors that
    return new NoiseTransport(out.subarray(32), out.subarray(0, 32))
  }
}

export class NoiseTransport {
  private readCounter = 0
  private writeCounter = 0

  constructor (
    private readonly encKey: Buffer,
    private readonly decKey: Buffer
  ) {}

  encrypt (plaintext: Uint8Array): Buffer {
    return aesGcmEncrypt(this.encKey, ivFor(this.writeCounter++), EMPTY, plaintext)
  }

  decrypt (ciphertext: Uint8Array): Buffer {
    return aesGcmDecrypt(this.decKey, ivFor(this.readCounter++), EMPTY, ciphertext)
  }
}

export interface HandshakeResult {
  transport: NoiseTransport
  clientStaticKey: Buffer
  payload: proto.ClientPayload
}

/**
 * Drives one connection's handshake: `onClientHello` returns the serverHello bytes to send,
 * `onClientFinish` returns the transport keys, the client's static key and its ClientPayload.
 */
export class NoiseServerHandshake {
  private readonly state = new HandshakeState()
  private readonly ephemeral: KeyPair = generateX25519KeyPair()
  private clientEphemeral: Buffer = EMPTY

  constructor (
    private readonly serverStatic: KeyPair,
    private readonly certChain: Uint8Array
  ) {
    this.state.authenticate(NOISE_WA_HEADER)
  }

  onClientHello (frame: Uint8Array): Buffer {
    const { clientHello } = proto.HandshakeMessage.decode(frame)
    const clientEphemeral = clientHello?.ephemeral
    if (!clientEphemeral || clientEphemeral.length !== 32) {
      throw new Error('handshake: clientHello without a 32-byte ephemeral key')
    }
    this.clientEphemeral = Buffer.from(clientEphemeral)
    this.state.authenticate(this.clientEphemeral)
    this.state.authenticate(this.ephemeral.public)
    this.state.mixIntoKey(Curve.sharedKey(this.ephemeral.private, this.clientEphemeral))
    const staticCiphertext = this.state.encrypt(this.serverStatic.public)
    this.state.mixIntoKey(Curve.sharedKey(this.serverStatic.private, this.clientEphemeral))
    const payloadCiphertext = this.state.encrypt(this.certChain)
    return Buffer.from(
      proto.HandshakeMessage.encode({
        serverHello: { ephemeral: this.ephemeral.public, static: staticCiphertext, payload: payloadCiphertext }
      }).finish()
    )
  }

  onClientFinish (frame: Uint8Array): HandshakeResult {
    const { clientFinish } = proto.HandshakeMessage.decode(frame)
    if (!clientFinish?.static || !clientFinish.payload) {
      throw new Error('handshake: clientFinish without static key or payload')
    }
    const clientStaticKey = this.state.decrypt(clientFinish.static)
    this.state.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientStaticKey))
    const payload = proto.ClientPayload.decode(this.state.decrypt(clientFinish.payload))
    return { transport: this.state.split(), clientStaticKey, payload }
  }
}

/**
 * Splits the client's byte stream into frames (3-byte big-endian length prefix), consuming the
 * connection preamble first: `WA 06 03`, or `ED 00 01` + 3-byte length + routing info + `WA 06 03`.
 */
export class FrameReader {
  private buffer: Buffer = EMPTY
  private preambleDone = false

  push (data: Buffer): Buffer[] {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, data]) : data
    const frames: Buffer[] = []
    if (!this.preambleDone && !this.consumePreamble()) {
      return frames
    }
    while (this.buffer.length >= 3) {
      const size = this.buffer.readUIntBE(0, 3)
      if (this.buffer.length < size + 3) {
        break
      }
      frames.push(this.buffer.subarray(3, size + 3))
      this.buffer = this.buffer.subarray(size + 3)
    }
    return frames
  }

  private consumePreamble (): boolean {
    let offset = 0
    if (this.buffer.length >= 4 && this.buffer.subarray(0, 4).equals(EDGE_ROUTING_MAGIC)) {
      if (this.buffer.length < 7) return false
      offset = 7 + this.buffer.readUIntBE(4, 3)
    }
    if (this.buffer.length < offset + NOISE_WA_HEADER.length) {
      return false
    }
    if (!this.buffer.subarray(offset, offset + NOISE_WA_HEADER.length).equals(NOISE_WA_HEADER)) {
      throw new Error(`bad connection preamble ${this.buffer.subarray(0, 8).toString('hex')}`)
    }
    this.buffer = this.buffer.subarray(offset + NOISE_WA_HEADER.length)
    this.preambleDone = true
    return true
  }
}

export function encodeFrame (payload: Uint8Array): Buffer {
  if (payload.length >= 1 << 24) {
    throw new Error('frame too large')
  }
  const frame = Buffer.allocUnsafe(3 + payload.length)
  frame.writeUIntBE(payload.length, 0, 3)
  frame.set(payload, 3)
  return frame
}
