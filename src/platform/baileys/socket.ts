import { Socket } from 'node:net'
import type { BinaryNode, WASocket } from '@whiskeysockets/baileys'

// Every use of the socket's internals (sock.ws and what it wraps), behind named functions. Each relies on
// an assumption of assumptions.ts, checked at start (compat.ts); the name is given with each function.

/** The tag a held frame carries while Baileys must not handle it (see holdFrame). */
export const HELD_TAG = 'receipt-held'

/** A raw stanza listener: a decoded node, or bytes Baileys could not decode. */
export type FrameListener = (frame: BinaryNode) => void

/**
 * Runs `listener` for every decoded stanza of the socket, before Baileys handles it (its `CB:` events
 * come after, synchronously). Assumption `frame-event-first`.
 */
export function onFrame (sock: WASocket, listener: FrameListener): void {
  sock.ws.on('frame', (frame: BinaryNode | Uint8Array) => { if (!(frame instanceof Uint8Array)) listener(frame) })
}

/**
 * Keeps Baileys away from a frame seen in onFrame: renamed, no `CB:` listener matches it, so Baileys
 * neither handles nor acks it (it reads the tag after the 'frame' listeners returned). Assumption
 * `frame-event-first`.
 */
export function holdFrame (frame: BinaryNode): void {
  frame.tag = HELD_TAG
}

/** The frame's tag again, as it came (for its ack, which echoes it as `class`). */
export function releaseFrame (frame: BinaryNode, tag: string): void {
  frame.tag = tag
}

/**
 * Acks a stanza with the `<ack>` Baileys sends for it itself (rc14's handleReceipt, in its `finally`).
 * Assumption `receipt-ack`.
 */
export async function ackStanza (sock: WASocket, frame: BinaryNode): Promise<void> {
  await sock.sendMessageAck(frame)
}

/** The socket can write now. Assumption `ws-client-socket` (`isOpen`). */
export function socketOpen (sock: WASocket): boolean {
  return sock.ws.isOpen
}

/**
 * Listens for stanzas matching `CB:<pattern>` (e.g. `iq,type:result,link_code_companion_reg`: tag,
 * attribute:value, first child) until the returned function is called. Assumption `callback-event-prefix`.
 */
export function onStanza (sock: WASocket, pattern: string, listener: (node: BinaryNode) => void): () => void {
  const event = `CB:${pattern}`
  sock.ws.on(event, listener)
  return () => { sock.ws.off(event, listener) }
}

/** The `ws` WebSocket under Baileys' client, as far as the service uses it. */
export interface RawSocket {
  send: (data: unknown, ...rest: unknown[]) => void
  terminate: () => void
  /** the TCP (TLS) socket under it, once connected */
  _socket?: unknown
}

/**
 * The `ws` WebSocket Baileys' client writes every frame through (created in connect(), which makeWASocket
 * calls). Throws when it is not there: the gate and the acks would otherwise be skipped silently.
 * Assumptions `ws-client-socket`, `ws-raw-socket`.
 */
export function rawSocket (sock: WASocket): RawSocket {
  const raw = (sock.ws as unknown as { socket?: RawSocket | null }).socket
  if (raw === null || raw === undefined || typeof raw.send !== 'function' || typeof raw.terminate !== 'function') {
    throw new Error('Baileys assumption "ws-client-socket" broke: the socket has no ws WebSocket as sock.ws.socket')
  }
  return raw
}

/**
 * The TCP socket under the socket's WebSocket (ws keeps it as `_socket`; no public accessor), null while
 * not connected. Assumption `ws-raw-socket`.
 */
export function tcpSocket (sock: WASocket): Socket | null {
  const tcp = (sock.ws as unknown as { socket?: RawSocket | null }).socket?._socket
  return tcp instanceof Socket ? tcp : null
}

/**
 * rc14's end() removes the ws 'close' listeners its pending queries wait on before closing, so each query
 * would wait out its 60 s timeout, keeping timers (and the process) alive. They also listen for 'error'
 * on the same client: raising one after the close settles them at once. Assumption `pending-queries-on-error`.
 */
export function releasePendingQueries (sock: WASocket): void {
  if (sock.ws.listenerCount('error') > 0) sock.ws.emit('error', new Error('connection closed'))
}
