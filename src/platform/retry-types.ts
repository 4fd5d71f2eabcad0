// What the platform tells of status retry receipts (session/status-retries.ts), and where it reads a sent status's message.

/**
 * What became of a status retry receipt (session/status-retries.ts): `answered` (sent again to status@broadcast
 * with the sender key for the device, and acknowledged), `unknown-message` (no longer kept: the device gets
 * the key with the next post), `too-many` (the device's fifth retry of it, or the fifth answer), `sending-device`
 * (the posting device itself), `bad-keys` (its key bundle could not be installed), `refused` (the platform
 * answered the resend with an error), `failed` (it could not be sent)
 */
export type StatusRetryOutcome = 'answered' | 'unknown-message' | 'too-many' | 'sending-device' | 'bad-keys' | 'refused' | 'failed'

/**
 * The statuses the service stored: the message of a status as it went out (the bytes `onPrepared` got), by the
 * session and the platform message id; null when it is not stored (any more). Read to answer a retry receipt for
 * a status the session no longer keeps in memory (after a restart, or past the last 64).
 */
export interface SentStatusStore {
  payload: (sessionId: string, messageId: string) => Promise<Uint8Array | null>
}

export interface StatusRetrySeen {
  sessionId: string
  messageId: string
  /** the device as the receipt named it */
  requester: string
  /** the device answered (a phone-number requester mapped to its LID device) */
  device: string
  /** the receipt's `<retry count>` */
  count: number
  outcome: StatusRetryOutcome
  error?: string
}
