/**
 * What the server announces to a client outside any message (issue 39 item 5), each stanza with its public source:
 *
 * - `<ib from="s.whatsapp.net"><client_expiration t="UNIX SECONDS"/></ib>`: the date the server expects to stop
 *   accepting the running client build (oxidezap/whatsapp-rust PR #1314, 2026-08-16: WA Web's
 *   `WASmaxInClientExpirationClientExpirationRequest`, the one `<ib>` parser whatspec lists, `from` a jid and `t`
 *   an integer under `client_expiration`). A notice: the emulator keeps accepting the client.
 * - `<stream:error code="429"/>` then the end of the stream: the server asks the client to back off
 *   (whatsapp-rust PR #353, 2026-03-14, from WA Web's WAWebHandleStreamError; PR #1263, 2026-08-10). The
 *   emulator sends it on request (fault `rate-limited`, server-accounts.ts).
 * - `<ack refresh_lid="true">` on the ack of a one-to-one message: the LID mapping the client holds for that
 *   peer is stale (whatsapp-rust PR #1313, 2026-08-16; WhiskeySockets/Baileys PR #2661, 2026-06-26, saw it on the
 *   first message to a contact whose LID had changed, `refresh_lid: "true"` as a string). Never on a
 *   status@broadcast ack (#1313 refreshes one peer). The emulator puts it on the next ack of a message to a
 *   contact whose LID changed (`changeLid`), or sends one on request (`sendRefreshLidAck`).
 */
import { jidDecode, type BinaryNode } from '@whiskeysockets/baileys'
import type { Directory } from './accounts.js'

const unixNow = (): string => String(Math.floor(Date.now() / 1000))

export function clientExpirationNode (t: number): BinaryNode {
  return { tag: 'ib', attrs: { from: 's.whatsapp.net' }, content: [{ tag: 'client_expiration', attrs: { t: String(t) } }] }
}

/** An ack of a one-to-one message carrying `refresh_lid="true"` (`from`: the peer, as the client addressed it). */
export function refreshLidAckNode (id: string, from: string): BinaryNode {
  return { tag: 'ack', attrs: { class: 'message', id, from, t: unixNow(), refresh_lid: 'true' } }
}

/** Contacts whose LID changed since a client last messaged them: the next ack of a message to them says so. */
export class StaleLids {
  private readonly numbers = new Set<string>()

  mark (number: string): void {
    this.numbers.add(number)
  }

  /**
   * `{ refresh_lid: 'true' }` for the ack of a one-to-one message to a contact whose LID changed (by number or by
   * any LID it had), once; nothing for status@broadcast, groups or anyone else.
   */
  ackAttrs (directory: Directory, to: string): Record<string, string> {
    const decoded = jidDecode(to)
    if (decoded === undefined || !['s.whatsapp.net', 'c.us', 'lid'].includes(decoded.server)) return {}
    const party = directory.resolveUser(decoded.user, decoded.server)
    if (party === undefined || !this.numbers.delete(party.number)) return {}
    return { refresh_lid: 'true' }
  }
}
