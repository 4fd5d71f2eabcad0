import type { WASocket } from '@whiskeysockets/baileys'

// One socket of a session and what happened on it (connection.ts opens them): a file of its own so that
// what takes an attempt (linking.ts) need not import the connection that imports it.

/** One socket's life: `ready` once the server sent pair-device (a pairing code can be asked for). */
export interface Attempt {
  gen: number
  sock: WASocket
  ready: boolean
  open: boolean
  codeRequested: boolean
  /** code requests on one socket go one at a time, so each confirmation is matched to its request */
  codeChain: Promise<unknown>
}
