/**
 * WA Web's newer status publish stanza (issue 39 item 6): behind the A/B flags `status_e2ee_send_over_status_stanza`
 * (WAWebStatusGatingUtils.isStatusStanzaSendEnabled) and `web_status_send_via_smax` (isStatusPublishViaSmaxEnabled),
 * WA Web posts a status as `<status id to="status@broadcast">` instead of `<message>`, with the same children:
 *
 * - WAWebEncryptAndSendStatusMsg `maybeApplyStatusTag`: the `<message>` built for status@broadcast is retagged
 *   `status` (its `device_fanout` attribute dropped when it has no `<participants>`), and the ack waited for is
 *   `class: "status"` (`toCoreAckTemplate({ id, class, from: status@broadcast })`); otherwise `message`.
 * - WASmaxOutStatusPublishPostBroadcastStatusRequest `makePostBroadcastStatusRequest`: `smax("status", { id, to:
 *   STATUS_BROADCAST, t? })` with mixins for the device identity, `<meta status_setting>`, the media fan-out, the
 *   mentioned users, the participants; WASmaxInStatusPublishStatusAckMixin answers it with an `<ack>` whose `class`
 *   must be `status`, `from` the request's `to`, `id` the request's id.
 * - The audience is LIDs only: `compactMap(statusList, toUserLid)` leaves out every member without a LID mapping
 *   (WAWebEncryptAndSendStatusMsg `encryptAndSendStatusMsg`). wppconnect-team/wa-js #3629 (2026-09-05) saw the
 *   module's call reworked (one options object) in WA Web 2.3000.1046805918.
 *
 * The emulator takes a `<status>` publish stanza as it takes a `<message to="status@broadcast">` (same rules, same
 * fan-out and decryption, statuses.ts), with two differences, each enforced: its ack (and any NACK) is
 * `class="status"`, and a `<to jid>` by phone number is refused for every account, legacy ones included (the
 * rule `pn-participants`). A `<status>` to anything but status@broadcast is refused 479 (the request's `to` is the
 * constant STATUS_BROADCAST). Contacts' statuses arriving from the server are `<status>` too (contact-statuses.ts):
 * those go the other way and are not publish stanzas.
 */
import type { BinaryNode } from '@whiskeysockets/baileys'

export const STATUS_JID = 'status@broadcast'

/** The element a client publishes a status in. */
export type PublishTag = 'message' | 'status'

/** The ack class owed to a stanza: `status` for a `<status>` publish stanza, else `message`. */
export function ackClassOf (node: BinaryNode): PublishTag {
  return node.tag === 'status' ? 'status' : 'message'
}

/** A `<status>` publish stanza the server refuses before anything else: one not addressed to status@broadcast. */
export function misaddressedStatus (node: BinaryNode): string | undefined {
  if (node.tag !== 'status') return undefined
  const to = node.attrs.to ?? ''
  return to === STATUS_JID ? undefined : `a <status> publish stanza to "${to}" (only status@broadcast takes one)`
}
