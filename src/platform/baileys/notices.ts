import { DEFAULT_CONNECTION_CONFIG, getBinaryNodeChild, isLidUser, jidNormalizedUser, USyncQuery, USyncUser, type BinaryNode, type WASocket } from '@whiskeysockets/baileys'
import { STATUS_JID } from '../../jid.js'
import { onStanza } from './socket.js'

// What the server announces outside any message (issue 39 item 5), read from the socket's stanzas with
// Baileys' `CB:` events (assumption `callback-event-prefix`) and answered with its public pieces.

/**
 * `<ib><client_expiration t="UNIX SECONDS"/></ib>`: the date the server expects to stop accepting the running
 * client build (oxidezap/whatsapp-rust PR #1314, 2026-08-16: WA Web's `WASmaxInClientExpirationClientExpirationRequest`
 * is the one `<ib>` parser whatspec lists, field `t` under `client_expiration`; "notice, not an instruction": the
 * client keeps connecting until it is refused). rc14 has no handler for it. `listener` gets the date (a `t` that
 * is not a positive integer is ignored).
 */
export function onClientExpiration (sock: WASocket, listener: (expiresAt: Date) => void): () => void {
  return onStanza(sock, 'ib,,client_expiration', (node: BinaryNode) => {
    const t = getBinaryNodeChild(node, 'client_expiration')?.attrs.t
    const seconds = Number(t)
    if (t === undefined || !Number.isSafeInteger(seconds) || seconds <= 0) return
    listener(new Date(seconds * 1000))
  })
}

/**
 * `<ack refresh_lid="true" from=PEER>`: the LID-PN mapping held for that peer is stale and must be queried
 * again (oxidezap/whatsapp-rust PR #1313, 2026-08-16: read on every ack before the response waiter is taken;
 * WhiskeySockets/Baileys PR #2661, 2026-06-26, saw it on the first message to a contact whose LID changed). Not
 * for status@broadcast acks (the brief of issue 39, following #1313, which refreshes one peer, never a broadcast)
 * nor for a group: only a user JID is refreshed. `listener` gets the peer as the ack names it.
 */
export function onRefreshLidAck (sock: WASocket, listener: (peer: string) => void): () => void {
  return onStanza(sock, 'ack,refresh_lid:true', (node: BinaryNode) => {
    const peer = node.attrs.from
    if (peer === undefined || peer === STATUS_JID) return
    if (!/@(s\.whatsapp\.net|c\.us|lid)$/.test(peer)) return
    listener(peer)
  })
}

/**
 * Queries the peer's LID again by phone number and stores what the server answers in Baileys' LID store
 * (`lidMapping.storeLIDPNMappings`, which overwrites a different stored LID). whatsapp-rust #1313 addresses the
 * refresh by phone number: "asking about a LID we already suspect is wrong would look the answer up under the
 * very key in doubt". A LID peer is turned into its number through the stored mapping first. Uses the public
 * `USyncQuery().withLIDProtocol()` and `sock.executeUSyncQuery` (the query rc14's own pnFromLIDUSync sends).
 * Resolves with the new LID user JID, or null when the number is unknown or the server named no LID.
 */
export async function refreshLidMapping (sock: WASocket, peer: string): Promise<{ pn: string, lid: string } | null> {
  const pn = isLidUser(peer) === true
    ? await sock.signalRepository.lidMapping.getPNForLID(jidNormalizedUser(peer))
    : jidNormalizedUser(peer)
  if (pn === null || pn === undefined) return null
  const pnUser = jidNormalizedUser(pn)
  const query = new USyncQuery().withLIDProtocol().withContext('background').withUser(new USyncUser().withId(pnUser))
  const result = await sock.executeUSyncQuery(query)
  const lid = result?.list.find((entry) => typeof entry.lid === 'string' && entry.lid !== '')?.lid
  if (typeof lid !== 'string' || isLidUser(lid) !== true) return null
  const lidUser = jidNormalizedUser(lid)
  await sock.signalRepository.lidMapping.storeLIDPNMappings([{ lid: lidUser, pn: pnUser }])
  return { pn: pnUser, lid: lidUser }
}

/** The stream error the server sent before ending the stream, from the close's Boom (rc14 `CB:stream:error`: `data` is its first child or the node). */
export function streamErrorCode (error: unknown): number | undefined {
  const boom = error as { output?: { statusCode?: unknown }, message?: unknown } | undefined
  const code = boom?.output?.statusCode
  return typeof code === 'number' && typeof boom?.message === 'string' && boom.message.startsWith('Stream Errored') ? code : undefined
}

/** The client build the sockets announce: WA_VERSION, else the version Baileys connects with by default. */
export function clientBuild (version: [number, number, number] | null): string {
  return (version ?? DEFAULT_CONNECTION_CONFIG.version).join('.')
}
