import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, jidNormalizedUser, parseAndInjectE2ESessions, S_WHATSAPP_NET, type BinaryNode, type WASocket } from '@whiskeysockets/baileys'
import type { PlatformLogger as Logger } from '../logger.js'
import { uncachedRecipients } from './devices.js'

// A head start for a long status list: the devices of recipients Baileys does not know yet are looked up
// in one usync query, and their Signal sessions set up batch by batch (one pre-key fetch and one key-store
// commit per batch), so the chunks find the devices cached and the sessions in place instead of two round
// trips per chunk. Nothing is sent here, and on any error the chunks do the same work themselves.
// Baileys internals: sock.userDevicesCache, sock.getUSyncDevices, sock.query (the `encrypt` pre-key query),
// parseAndInjectE2ESessions, signalRepository.validateSession, sock.assertSessions, sock.authState.keys.transaction.

export interface SessionPrep {
  /** resolves once the sessions of these recipients' devices are set up (or their preparation failed) */
  ready: (users: string[]) => Promise<void>
}

/** sessions set up per turn of the event loop (≈ 0.5 ms each) */
const INJECT_SLICE = 32

const NONE: SessionPrep = { ready: async () => {} }

/**
 * Starts preparing `batches` (recipient JIDs in the order their chunks go out; `lid`: LID user JIDs, else
 * phone-number ones, left to Baileys' assertSessions) and returns at once.
 * Every batch's pre-key fetch is issued up front: the platform answers them one after another, so the
 * sessions of batch k are set up here while it still assembles the bundles of batch k + 1, and chunk 1
 * goes out as soon as its own batch is ready while the rest are prepared (the whole list's preparation
 * no longer sits in front of the first chunk). Recipients whose devices are cached (a second send) are
 * left to the chunks: checking their sessions here would read every session record once more.
 */
export async function prepareSessions (sock: WASocket, batches: string[][], lid: boolean, logger: Logger): Promise<SessionPrep> {
  const unknown: string[][] = []
  for (const batch of batches) {
    const todo = await uncachedRecipients(sock, batch)
    if (todo.length > 0) unknown.push(todo)
  }
  if (unknown.length === 0) return NONE
  const all = unknown.flat()
  // one usync query for every unknown recipient (Baileys caches the answer for the chunks' own look-ups)
  const devices = sock.getUSyncDevices(all, true, false)
  const byUser = new Map<string, Promise<void>>()
  // sessions are set up batch after batch, in chunk order (interleaved, every batch would be ready only
  // at the end), while every batch's pre-keys are requested up front: the platform assembles batch k + 1's
  // bundles while batch k's sessions are set up here
  let previous: Promise<unknown> = devices
  let checked: Promise<unknown> = devices
  for (const [index, batch] of unknown.entries()) {
    const users = new Set(batch.map((jid) => jidDecode(jid)?.user))
    const jids = devices.then((list) => list.filter((d) => users.has(d.user)).map((d) => d.jid))
    // the queries go out in chunk order (checked one batch after another), so their answers come back in it
    const lacking = lid ? Promise.all([jids, checked]).then(async ([list]) => await withoutSession(sock, list)) : null
    checked = lacking ?? checked
    const fetched = lacking?.then(async (list) => list.length === 0 ? null : await fetchBundles(sock, list)) ?? null
    const done = Promise.all([jids, fetched, previous]).then(async ([list, bundles]) => {
      // one transaction per batch: its sessions are committed together, not one key-store write each
      await sock.authState.keys.transaction(async () => {
        if (!lid) await sock.assertSessions(list)
        else if (bundles !== null) {
          // in slices with a turn of the event loop between them: setting up sessions never waits for I/O,
          // so a whole batch would hold back the acks (and the chunks they release) until it is done
          for (const slice of slices(bundles, INJECT_SLICE)) {
            await new Promise((resolve) => setImmediate(resolve))
            await parseAndInjectE2ESessions(slice, sock.signalRepository)
          }
        }
      }, `status-prepare-${index}`)
    }).catch((err: unknown) => {
      logger.debug({ err, recipients: batch.length }, 'setting up sessions ahead of a chunk failed; the chunk will')
    })
    previous = done
    for (const jid of batch) byUser.set(jidNormalizedUser(jid), done)
  }
  return {
    ready: async (users) => {
      const waits = new Set<Promise<void>>()
      for (const user of users) {
        const wait = byUser.get(jidNormalizedUser(user))
        if (wait !== undefined) waits.add(wait)
      }
      await Promise.all(waits)
    }
  }
}

/** The devices without an open Signal session. */
async function withoutSession (sock: WASocket, jids: string[]): Promise<string[]> {
  const lacking: string[] = []
  for (const jid of jids) {
    if (!(await sock.signalRepository.validateSession(jid)).exists) lacking.push(jid)
  }
  return lacking
}

/**
 * The pre-key bundles of these devices: Baileys' assertSessions without the session set-up (the caller
 * injects them in chunk order). Devices here are LID device JIDs, which is what the `encrypt` query takes
 * (assertSessions maps phone numbers to LIDs first).
 */
async function fetchBundles (sock: WASocket, jids: string[]): Promise<BinaryNode> {
  return await sock.query({
    tag: 'iq',
    attrs: { xmlns: 'encrypt', type: 'get', to: S_WHATSAPP_NET },
    content: [{ tag: 'key', attrs: {}, content: jids.map((jid): BinaryNode => ({ tag: 'user', attrs: { jid } })) }]
  })
}

/** The `encrypt` answer split into answers of at most `size` users each. */
function slices (answer: BinaryNode, size: number): BinaryNode[] {
  const users = getBinaryNodeChildren(getBinaryNodeChild(answer, 'list'), 'user')
  const out: BinaryNode[] = []
  for (let i = 0; i < users.length; i += size) {
    out.push({ ...answer, content: [{ tag: 'list', attrs: {}, content: users.slice(i, i + size) }] })
  }
  return out
}
