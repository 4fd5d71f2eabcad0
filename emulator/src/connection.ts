/** One client WebSocket: Noise handshake, then encrypted binary-node frames in both directions. */
import { decodeBinaryNode, encodeBinaryNode, type BinaryNode, type proto } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import { WebSocket } from 'ws'
import type { AckCounters } from './acks.js'
import type { Account, CompanionDevice } from './accounts.js'
import { encodeFrame, FrameReader, NoiseServerHandshake, type HandshakeResult, type NoiseTransport } from './noise.js'
import type { KeyPair } from './xeddsa.js'

/** Frames written in one WebSocket message at most (Baileys' reader accepts several frames per message). */
const MAX_BATCH_BYTES = 256 * 1024
/** A client that has not finished the Noise handshake by then is dropped. */
const HANDSHAKE_TIMEOUT_MS = 20_000

export interface ConnectionHandler {
  onHandshake(conn: WaConnection, result: HandshakeResult): void
  onNode(conn: WaConnection, node: BinaryNode): Promise<void>
  onClose(conn: WaConnection): void
}

/** State of a connection that registers a new companion (ClientPayload with devicePairingData). */
export interface RegistrationState {
  pairingData: proto.ClientPayload.IDevicePairingRegistrationData
  refs: { ref: string, expiresAt: number }[]
  closeTimer?: NodeJS.Timeout
  linkCode?: LinkCodeRequest
  pairing?: PendingPairing
}

export interface LinkCodeRequest {
  number: string
  ref: string
  wrappedEphemeral: Buffer
  attempt?: LinkCodeAttempt
}

export interface LinkCodeAttempt {
  account: Account
  primaryEphemeral: KeyPair
  companionEphemeral: Buffer
  settle(result: { device: number } | Error): void
}

export interface PendingPairing {
  iqId: string
  account: Account
  deviceId: number
  keyIndex: number
  companionIdentity: Buffer
  platform?: string
  done: boolean
}

let nextConnectionId = 1

export class WaConnection {
  readonly id = nextConnectionId++
  readonly openedAt = new Date()
  stage: 'hello' | 'finish' | 'transport' | 'closed' = 'hello'
  clientStaticKey?: Buffer
  payload?: proto.ClientPayload
  registration?: RegistrationState
  account?: Account
  device?: CompanionDevice
  /** ack counters, from login on (see acks.ts) */
  acks?: AckCounters
  private transport?: NoiseTransport
  private readonly handshake: NoiseServerHandshake
  private readonly reader = new FrameReader()
  private chain: Promise<void> = Promise.resolve()

  constructor (
    readonly ws: WebSocket,
    serverStatic: KeyPair,
    certChain: Uint8Array,
    private readonly handler: ConnectionHandler,
    private readonly logger: Logger
  ) {
    this.handshake = new NoiseServerHandshake(serverStatic, certChain)
    const handshakeTimer = setTimeout(() => {
      if (this.stage === 'hello' || this.stage === 'finish') this.fail(new Error('handshake timed out'))
    }, HANDSHAKE_TIMEOUT_MS)
    handshakeTimer.unref()
    ws.on('message', (data, isBinary) => {
      if (!isBinary) {
        this.fail(new Error('text WebSocket message'))
        return
      }
      this.onData(Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer))
    })
    ws.on('close', () => {
      clearTimeout(handshakeTimer)
      if (this.stage !== 'closed') {
        this.stage = 'closed'
        this.handler.onClose(this)
      }
    })
    ws.on('error', (error) => this.logger.debug({ conn: this.id, error: error.message }, 'websocket error'))
  }

  get isOpen (): boolean {
    return this.stage !== 'closed' && this.ws.readyState === WebSocket.OPEN
  }

  get isLoggedIn (): boolean {
    return this.isOpen && !!this.device
  }

  private onData (data: Buffer): void {
    let frames: Buffer[]
    try {
      frames = this.reader.push(data)
    } catch (error) {
      this.fail(error as Error)
      return
    }
    for (const frame of frames) {
      if (this.stage === 'closed') return
      try {
        this.onFrame(frame)
      } catch (error) {
        this.fail(error as Error)
        return
      }
    }
  }

  private onFrame (frame: Buffer): void {
    if (this.stage === 'hello') {
      this.ws.send(encodeFrame(this.handshake.onClientHello(frame)))
      this.stage = 'finish'
      return
    }
    if (this.stage === 'finish') {
      const result = this.handshake.onClientFinish(frame)
      this.transport = result.transport
      this.clientStaticKey = result.clientStaticKey
      this.payload = result.payload
      this.stage = 'transport'
      this.handler.onHandshake(this, result)
      return
    }
    // decrypt now (the nonce counter follows arrival order), decode and handle in order
    const plaintext = this.transport!.decrypt(frame)
    this.chain = this.chain
      .then(async () => {
        if (this.stage === 'closed') return
        const node = await decodeBinaryNode(plaintext)
        await this.handler.onNode(this, node)
      })
      .catch((error) => this.fail(error as Error))
  }

  /** Resolves when every frame received so far has been handled. */
  idle (): Promise<void> {
    return this.chain
  }

  send (node: BinaryNode): void {
    this.sendMany([node])
  }

  /** Encrypt and write nodes in order without waiting for the socket, coalescing frames into few messages. */
  sendMany (nodes: readonly BinaryNode[]): void {
    if (!this.isOpen || !this.transport) return
    let batch: Buffer[] = []
    let batchBytes = 0
    const flush = () => {
      if (batch.length) this.ws.send(batch.length === 1 ? batch[0] : Buffer.concat(batch, batchBytes))
      batch = []
      batchBytes = 0
    }
    for (const node of nodes) {
      const frame = encodeFrame(this.transport.encrypt(encodeBinaryNode(node)))
      if (batchBytes + frame.length > MAX_BATCH_BYTES) flush()
      batch.push(frame)
      batchBytes += frame.length
    }
    flush()
  }

  /** `<stream:error code=…>` then close, as the server does before dropping a stream. */
  streamError (code: string, child?: BinaryNode): void {
    this.send({ tag: 'stream:error', attrs: { code }, content: child ? [child] : undefined })
    this.close()
  }

  close (): void {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) {
      this.ws.close()
    }
  }

  terminate (): void {
    this.ws.terminate()
  }

  private fail (error: Error): void {
    this.logger.warn({ conn: this.id, err: error.message }, 'closing connection after error')
    this.terminate()
  }
}
