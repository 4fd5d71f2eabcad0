import type { WASocket } from '@whiskeysockets/baileys'
import { rawSocket } from './baileys/index.js'

// Baileys does not wait for its `creds.update` listeners: it answers pair-success, and uploads pre-keys
// under the new ids, right after emitting the new creds. The write is on its way when the answer goes out,
// so a crash in between would leave the platform with a linked device (or pre-keys) the database never
// heard of.
// The gate makes every frame of the socket wait, in order, for the session's auth writes handed over
// before it. When one of them failed, nothing more is written: the connection is dropped and the session
// reconnects from what the database holds. With nothing pending a frame goes out at once, as before.

export interface SendGateOptions {
  /** the session's auth writes not yet settled: resolves false when one failed (SessionAuth.writesPending) */
  pending: () => Promise<boolean> | undefined
  /** a write failed: the connection is being dropped */
  onRefused: () => void
}

/** Installs the gate on a socket made by createSocket, before any frame is sent. */
export function gateSends (sock: WASocket, opts: SendGateOptions): void {
  // the `ws` WebSocket every frame goes through (Baileys' WebSocketClient calls `socket.send(data, cb)`)
  const raw = rawSocket(sock)
  const send = raw.send.bind(raw)
  /** frames waiting, in order; null when none is */
  let tail: Promise<void> | null = null
  let refused = false

  raw.send = (data: unknown, ...rest: unknown[]): void => {
    const waitFor = opts.pending()
    if (waitFor === undefined && tail === null && !refused) { send(data, ...rest); return }
    const queued = (tail ?? Promise.resolve()).then(async () => {
      if (!refused && waitFor !== undefined && !(await waitFor)) {
        refused = true
        opts.onRefused()
        raw.terminate()
      }
      const callback = rest.at(-1)
      const fail = (err: Error): void => { if (typeof callback === 'function') callback(err) }
      if (refused) { fail(new Error('Connection dropped: the auth state could not be stored')); return }
      try {
        send(data, ...rest)
      } catch (err) {
        fail(err instanceof Error ? err : new Error(String(err)))
      }
    })
    tail = queued
    void queued.then(() => { if (tail === queued) tail = null })
  }
}
