/**
 * Status stanzas the server refuses on request (`Emulator.refuseStatuses`, `POST /accounts/:number/refuse-statuses`,
 * and the older `reject-next-status` fault: one refusal with 479). The server answers a stanza it will not take
 * with `<ack class="message" from="status@broadcast" id=… error=CODE/>` and delivers it to nobody:
 *
 * - a nack is the server rejecting the send, one ack per stanza: oxidezap/whatsapp-rust's chat store marks the
 *   message ERROR on it ("Nack: the server rejected the send", storages/chat-store/src/store.rs
 *   `apply_server_ack`, PR #1014, 2026-07-10); its `src/client/node_io.rs` `take_ack_waiter` logs every nack
 *   code ("the message was likely not delivered (e.g. 400 = malformed stanza, 404 = recipient not found,
 *   503 = service unavailable)"); tulir/whatsmeow fails the send with "server returned error CODE"
 *   (send.go, commit dcbc8dd3 "Handle ack errors when sending messages", 2023-01-28);
 * - large status batches get 429 that way: devlikeapro/waha #2096 (2026-05-26, whatsmeow engine: "Failed to
 *   send message … (batch 3/123): server returned error 429" on status@broadcast), following #2080 (2026-05-16);
 * - a refused status shows on nobody's phone, not even the poster's (WhiskeySockets/Baileys #2794, for 479).
 *
 * A stanza sent again under the same id after a refusal is a new stanza: checked and delivered as any other.
 */
import { EmulatorError } from './errors.js'
import type { StatusRefusalOptions } from './types.js'

const MAX_COUNT = 10_000

export interface Refusal { error: number, left: number, after: number }

/** The refusal the options ask for (400 naming the field when they are wrong). */
export function checkRefusal (options: StatusRefusalOptions): Refusal {
  if (options === null || typeof options !== 'object') throw new EmulatorError(400, 'a JSON body is required')
  const { error, count = 1, after = 0 } = options
  if (!Number.isInteger(error) || error < 100 || error > 999) throw new EmulatorError(400, 'error must be a 3-digit code (e.g. 429, 479, 503)')
  if (!Number.isInteger(count) || count < 0 || count > MAX_COUNT) throw new EmulatorError(400, `count must be an integer 0..${MAX_COUNT} (0 ends the refusals)`)
  if (!Number.isInteger(after) || after < 0 || after > MAX_COUNT) throw new EmulatorError(400, `after must be an integer 0..${MAX_COUNT}`)
  return { error, left: count, after }
}

/** Whether this status stanza is refused (and with which code); counts it against the refusal. */
export function refuses (refusal: Refusal): number | undefined {
  if (refusal.after > 0) { refusal.after--; return undefined }
  if (refusal.left <= 0) return undefined
  refusal.left--
  return refusal.error
}
