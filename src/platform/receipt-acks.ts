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

/**
 * Baileys formats stack traces for every stanza it sends, only to put them into errors nobody reads:
 * promiseTimeout and delayCancellable (Utils/generics.js) capture one each as the send starts, and once
 * the write is done its `finally(cancel)` rejects the spent timer with a `Boom` (two captures more), thrown
 * away. In a burst that was 8 % of the service's CPU and much of its garbage. While acks go, and while the
 * writes of the acks just uncorked call back, stack traces are left short (Error.stackTraceLimit 0): only
 * for the synchronous run that starts them and the microtasks that finish them, never across a turn of
 * the event loop (`quietStacks` restores the limit at the next setImmediate at the latest).
 */
let quiet = 0
let savedLimit = Error.stackTraceLimit
export function quietStacks (): () => void {
  if (quiet++ === 0) { savedLimit = Error.stackTraceLimit; Error.stackTraceLimit = 0 }
  let done = false
  const restore = (): void => {
    if (done) return
    done = true
    if (--quiet === 0) Error.stackTraceLimit = savedLimit
  }
  setImmediate(restore)
  return restore
}

/** Committed frames: each is acked now, in arrival order, by Baileys' own `sendMessageAck`. */
export function ackFrames (frames: HeldFrame[], logger: Logger): void {
  const corked = corkAcks(frames)
  const sent: Array<Promise<void>> = []
  const restore = quietStacks()
  try {
    for (const { sock, frame } of frames) {
      releaseFrame(frame, 'receipt')
      // a closed socket cannot ack: the platform sends the stanza again at the next login
      if (!socketOpen(sock)) continue
      sent.push(ackStanza(sock, frame).catch((err: unknown) => { logger.warn({ err, id: frame.attrs.id }, 'could not ack a status receipt; the platform sends it again') }))
    }
  } finally {
    restore()
  }
  if (corked.length === 0) return
  setImmediate(() => {
    // the writes done at once call back in the ticks that follow; their timers are cancelled in the microtasks after them
    const restoreAfterWrites = quietStacks()
    for (const tcp of corked) if (!tcp.destroyed) tcp.uncork()
    void Promise.all(sent).then(restoreAfterWrites)
  })
}
