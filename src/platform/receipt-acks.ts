import type { Socket } from 'node:net'
import type { BinaryNode, WASocket } from '@whiskeysockets/baileys'
import { ackStanza, releaseFrame, socketOpen, tcpSocket } from './baileys/index.js'
import type { PlatformLogger as Logger } from './logger.js'

// How committed status receipts are acknowledged (receipts.ts holds them until their commit).

export interface HeldFrame { sock: WASocket, frame: BinaryNode }

/**
 * Corks the TCP sockets under the frames' WebSockets. Baileys writes each ack as its own WebSocket message
 * with its own `write` (a system call each: 15 % of the service's CPU in a receipt burst); released
 * together, the acks are written in the microtasks that follow, so a cork lifted at the next
 * setImmediate sends them in one `writev`: the same WebSocket messages, in the same order, after the
 * commit. A socket not connected (no TCP socket yet) has nothing to cork.
 */
function corkAcks (frames: HeldFrame[]): Socket[] {
  const corked: Socket[] = []
  for (const { sock } of frames) {
    const tcp = tcpSocket(sock)
    if (tcp === null || corked.includes(tcp) || tcp.destroyed) continue
    tcp.cork()
    corked.push(tcp)
  }
  return corked
}

/** Committed frames: each is acked now, in arrival order, by Baileys' own `sendMessageAck`. */
export function ackFrames (frames: HeldFrame[], logger: Logger): void {
  const corked = corkAcks(frames)
  // Baileys formats two stack traces for every stanza it sends (promiseTimeout, delayCancellable in
  // Utils/generics.js), eagerly, only to put them into a timeout error: 5 % of the CPU of a burst and
  // much of its garbage. Its sends capture them synchronously, so they are left short while the acks go.
  const stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    for (const { sock, frame } of frames) {
      releaseFrame(frame, 'receipt')
      // a closed socket cannot ack: the platform sends the stanza again at the next login
      if (!socketOpen(sock)) continue
      ackStanza(sock, frame).catch((err: unknown) => { logger.warn({ err, id: frame.attrs.id }, 'could not ack a status receipt; the platform sends it again') })
    }
  } finally {
    Error.stackTraceLimit = stackTraceLimit
  }
  if (corked.length > 0) setImmediate(() => { for (const tcp of corked) if (!tcp.destroyed) tcp.uncork() })
}
