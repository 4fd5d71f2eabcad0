import type { PlatformLogger } from './logger.js'
import type { StatusRetrySeen } from './retry-types.js'

// The platform's public face. Route plugins, the broadcaster and the status service depend on these
// types only, never on Baileys'. Everything that imports Baileys lives under src/platform/.
export type { SentStatusStore, StatusRetryOutcome, StatusRetrySeen } from './retry-types.js'

export type AuthMethod = 'pairing' | 'qrcode'
export type ConnectionStatus = 'connecting' | 'open' | 'close' | 'logged-out'

export interface SessionSnapshot {
  sessionId: string
  connected: boolean
  status: ConnectionStatus
  /** digits of the linked account, null when not connected */
  ownNumber: string | null
  pairingCode: string | null
  /** PNG data URL */
  qrCode: string | null
}

/** One view of one of the session's statuses, as read from a receipt stanza. */
export interface StatusView {
  /** platform message id of the status */
  messageId: string
  /** the viewer as the platform named it: `<digits>@s.whatsapp.net` or `<lid>@lid` (device suffix dropped) */
  viewerJid: string
  /** viewer digits (a LID through the known LID → number mapping); null when the LID is not mapped yet */
  viewerNumber: string | null
  /** the viewer is the session's own account (a view from one of its own devices) */
  isOwn: boolean
  type: 'read' | 'played'
  /** ms since epoch */
  at: number
}

/** One delivery receipt of one of the session's statuses: a recipient's device has it (not a view). */
export type StatusDelivery = Omit<StatusView, 'type'>

/** One (status, viewer) pair of a receipt stanza, whatever its kind. */
export interface ReceiptSeen {
  messageId: string
  viewerJid: string
  type: StatusView['type'] | 'delivery'
}

/**
 * Where the platform hands status receipts over; the service provides it (like `SessionLinks`).
 *
 * `commit` gets the views and delivery receipts of every status receipt stanza of a session that arrived in
 * one turn of the event loop (one transaction for all of them), at setImmediate after the raw receipt
 * listener held those stanzas, so before Baileys has handled or acknowledged any of them. The stanzas' acks
 * are held until its promise settles (commit before ack):
 * - resolved: the receipts are committed; each stanza is acked now (Baileys' sendMessageAck).
 * - rejected (or thrown): nothing was committed; none of the stanzas is ever acked (Baileys does not see
 *   them) and the socket is closed, so the platform delivers them again at the next login.
 */
export interface ReceiptSink {
  /** the views and deliveries of the receipt stanzas of one event-loop turn, in one transaction (the one entry point) */
  commit: (sessionId: string, views: StatusView[], deliveries: StatusDelivery[]) => Promise<void>
  /**
   * whether `commit` stores delivery receipts; false: they are only counted (`seen`), and a stanza of
   * deliveries alone goes to Baileys, which acks it as it came
   */
  readonly takesDeliveries: boolean
  /** LIDs now known to be these numbers: views stored under a LID get the number */
  lidsMapped: (sessionId: string, mappings: Array<{ lid: string, number: string }>) => Promise<void>
  /** LIDs (`<lid>@lid`) of the session's stored views that have no number yet, at most `limit` */
  unmappedLids: (sessionId: string, limit: number) => Promise<string[]>
}

/**
 * A contact's reaction to, or reply to, one of the session's statuses, read from a decrypted 1:1 message:
 * a `reactionMessage` whose key is (`status@broadcast`, the status id), or a message whose `contextInfo`
 * quotes `status@broadcast` / the status id. Nothing else a chat carries is read.
 */
export type StatusInteraction = {
  /** platform message id of the status it answers */
  statusMessageId: string
  /** platform message id of the reaction / reply itself */
  messageId: string
  /** who: `<digits>@s.whatsapp.net` or `<lid>@lid` (device dropped), as the platform named them */
  fromJid: string
  /** their digits (a LID through the known mapping); null while a LID is not mapped */
  fromNumber: string | null
  /** ms since epoch: the reaction's own timestamp, or the message's */
  at: number
} & ({ kind: 'reaction', /** empty: the reaction was taken back */ emoji: string } | { kind: 'reply', text: string })

/**
 * Where reactions and replies to statuses are committed; the service provides it. `commit` runs inside
 * the decryption of the message, so before Baileys acknowledges it (its delivery receipt): resolved →
 * committed; thrown / rejected → nothing was, the socket is closed and the message comes again at the
 * next login. Redelivery must be harmless (the message id makes it idempotent).
 */
export interface InteractionSink {
  commit: (sessionId: string, interaction: StatusInteraction) => Promise<void>
  /** LIDs now known to be these numbers: reactions and replies stored under a LID get the number */
  lidsMapped: (sessionId: string, mappings: Array<{ lid: string, number: string }>) => Promise<void>
  /** LIDs (`<lid>@lid`) of the session's reactions and replies without a number yet, at most `limit` */
  unmappedLids: (sessionId: string, limit: number) => Promise<string[]>
}

/** One of the phone's saved contacts, from app-state sync (a `contact` or `lid_contact` action). */
export interface PhoneContact {
  /** the id the phone keys it by: `<number>@s.whatsapp.net`, or `<lid>@lid` for a contact known by its LID only */
  jid: string
  /** digits; null for a LID-only contact */
  number: string | null
  /** `<lid>@lid`; null when the phone gave none */
  lid: string | null
  name: string | null
}

export type StatusPrivacyMode = 'contacts' | 'allowlist' | 'denylist'

/** Who the phone's statuses go to: every saved contact, all of them but `numbers`, or only `numbers`. */
export interface PhoneStatusPrivacy {
  mode: StatusPrivacyMode
  /** the mode's list ([] for contacts): digits, or `<lid>@lid` for a LID whose number is not known */
  numbers: string[]
}

/**
 * Where what the linked phone shares is kept; the service provides it. The contact calls (and forget) for one
 * session come in the order the platform learnt things, each awaited before the next; so do the status
 * privacy calls. A call that fails is logged, and the contacts are read in full again at the next start.
 */
export interface PhoneSink {
  /** contacts saved or changed on the phone, and jids of contacts it removed */
  contactsChanged: (sessionId: string, change: { saved: PhoneContact[], removed: string[] }) => Promise<void>
  /** a full sync: exactly these are the phone's saved contacts now (any other is gone) */
  contactsReplaced: (sessionId: string, contacts: PhoneContact[]) => Promise<void>
  statusPrivacy: (sessionId: string, privacy: PhoneStatusPrivacy) => Promise<void>
  /** the account was logged out: what its phone shared is forgotten */
  forget: (sessionId: string) => Promise<void>
}

/** What `connection-status` tells of a session. */
export interface ConnectionStatusChange { sessionId: string, connected: boolean, status: ConnectionStatus, ownNumber: string | null, reason?: string }

export interface PlatformEventMap {
  /**
   * `recorded`: the change was handed to SessionLinks with the session row's write (open, logged-out), and
   * the service recorded it there; absent: nothing recorded it
   */
  'connection-status': ConnectionStatusChange & { recorded?: true }
  'pairing-code': { sessionId: string, pairingCode: string, phoneNumber: string }
  'pairing-code-error': { sessionId: string, error: string }
  'qr-code': { sessionId: string, qrCode: string }
  'qr-code-error': { sessionId: string, error: string }
  /**
   * Status receipts as they arrive, for counting (metrics): views once committed through the ReceiptSink,
   * deliveries as they are. Not a way in for viewers: those go through the sink only.
   */
  'status-receipts': { sessionId: string, receipts: ReceiptSeen[] }
  /**
   * an error ack for a status stanza (e.g. 429, 479). `inSend`: a status or revoke this process relayed,
   * whose send met it (sent again after push-back, or ended partial / failed with the code); without it, a
   * rejection the platform reported for a status of an earlier run
   */
  'status-error': { sessionId: string, messageId: string, error: string, inSend?: true }
  /** a recipient device asked for a status again (a retry receipt), and what was done about it */
  'status-retry': StatusRetrySeen
}

export type StatusContent =
  | { kind: 'text', text: string, backgroundColor?: string, font?: number }
  | { kind: 'image' | 'video', source: { path: string } | { url: string }, mimetype?: string, caption?: string }
  /** `ptt`: a voice note (OGG/Opus); `seconds`: the duration read from the file. The platform's audio has no caption. */
  | { kind: 'audio', source: { path: string } | { url: string }, mimetype: string, ptt: boolean, seconds?: number }

/** `<meta status_setting>` of a post: the poster's status privacy it follows (baileys/status-post.ts) */
export type StatusSetting = StatusPrivacyMode

export interface SendStatusInput {
  /** platform message id from newMessageId(); the caller stores it before sending */
  messageId: string
  /** what to send; may be left out when `prepared` is given */
  content?: StatusContent
  /**
   * the message exactly as an earlier attempt built it (the bytes `onPrepared` got): a resumed send
   * sends it again as it is, without a new media upload
   */
  prepared?: Uint8Array
  /**
   * recipient digits, de-duplicated, WITHOUT the own number (the platform adds it first); a contact known
   * only by its LID is given as its LID user JID (`<lid>@lid`), reachable from an LID-migrated account only
   */
  recipients: string[]
  /** the post's `<meta status_setting>` (LID-migrated accounts); default `allowlist` (an explicit list) */
  statusSetting?: StatusSetting
  /** numbers the status mentions (digits, at most 5, among `recipients`): named in the post, each told (baileys/status-mention.ts) */
  mentions?: string[]
  /** JIDs that already have it (from `onChunk` of an earlier attempt): not sent again */
  done?: string[]
  /** the built message (media uploaded), before anything goes out: store it to resume the send later */
  onPrepared?: (payload: Uint8Array) => Promise<void>
  /**
   * before a chunk goes out (once per chunk, before its first attempt): a crash from here on leaves the
   * caller not knowing whether these JIDs have it, so it records them as "may have it" first
   */
  onChunkStart?: (jids: string[]) => Promise<void>
  /**
   * after each chunk the platform acknowledged, with that chunk's JIDs (they have the status now); the
   * next chunk waits until this resolves, so the caller can commit them first. `progress`: how far the
   * send has got with this chunk when the list spans more than one chunk (or a resumed send continues),
   * else null; the caller commits the chunk and records its progress report in one step
   */
  onChunk?: (jids: string[], progress: SendProgress | null) => Promise<void>
  /**
   * a chunk was written but the link closed before the platform acknowledged it: these JIDs may have it.
   * The chunk is sent again after a reconnect (then onChunk confirms them); the next step waits for this.
   */
  onUnconfirmed?: (jids: string[]) => Promise<void>
  /**
   * an LID-migrated account posts to LIDs (docs/platform.md): these recipient numbers have no LID (no
   * stored mapping, none from the platform's lid query) and are not sent to. Called before the first chunk.
   */
  onUnreachable?: (numbers: string[]) => Promise<void>
}

/** A send to a long list so far: recipients that have it (the own number and earlier attempts' included), of all addressed. */
export interface SendProgress {
  sent: number
  total: number
}

export interface SendStatusResult {
  messageId: string
  /** every JID the status was addressed to, own number first (kept for revoke) */
  recipientJids: string[]
  /** recipient numbers that could not be sent to: no LID known for them (LID-migrated accounts only) */
  unreachable?: string[]
  /** mentioned numbers whose devices the mention message reached (the platform acknowledged it) */
  mentioned?: string[]
}

export interface SessionSpec {
  sessionId: string
  authMethod: AuthMethod
  phoneNumber: string | null
}

/** The `sessions` columns the platform reads and writes; the service provides them. */
export interface SessionLinks {
  get: (sessionId: string) => Promise<StoredSession | undefined>
  /**
   * called when a socket opens; the platform awaits it before `connection-status` announces the session
   * open. `change`: the `connection-status` that will announce it (null when none will), to record with the
   * row's write; the event then carries `recorded: true`. A write that fails records neither.
   */
  markLinked: (sessionId: string, ownNumber: string | null, ownLid: string | null, change: ConnectionStatusChange | null) => Promise<void>
  /** called on a logout by the platform, before `connection-status` announces it; `change` as for markLinked */
  markUnlinked: (sessionId: string, change: ConnectionStatusChange | null) => Promise<void>
}

export interface StoredSession { id: string, authMethod: AuthMethod, phoneNumber: string | null }

export interface PlatformTiming {
  /** first reconnect delay after a drop; doubles per failed attempt */
  reconnectBaseMs: number
  reconnectMaxMs: number
  /** how long requestPairingCode waits for a socket that can accept a code request */
  pairingReadyTimeoutMs: number
  /** how long a send waits for the session to be open again after the link dropped (per drop) */
  sendOpenWaitMs: number
  /** how long a chunk waits for the platform's ack before it counts as not delivered */
  sendAckTimeoutMs: number
  sendAttempts: number
  sendRetryBaseMs: number
  sendRetryMaxMs: number
  /** bound on connecting + logging out when a linked session is removed */
  logoutTimeoutMs: number
  /** bound on a socket's close handshake */
  socketEndTimeoutMs: number
  /** at most one look-up of the LIDs still unmapped (in the stored LID → number mappings) per this long */
  lidLookupIntervalMs: number
  /** after a burst of receipts, one full GC once none came for this long (burst-gc.ts); null: never (SPEED_TRICKS_OFF burst-gc) */
  burstGcQuietMs: number | null
}

/** What a session's receipt intake (receipts.ts) needs. */
export interface ReceiptIntakeOptions {
  sessionId: string
  sink: ReceiptSink
  /** receipts as they arrive (views after their commit), for counting */
  seen: (receipts: ReceiptSeen[]) => void
  /** the stored LID → number mapping (Baileys' `lid-mapping` keys), read synchronously */
  numberForLid: (lidUser: string) => string | null
  /** the linked account: its number and LID (`creds.me`) */
  me: () => { id?: string, lid?: string } | undefined
  /** false once the session is gone: nothing is taken any more */
  live: () => boolean
  lookupIntervalMs: number
  /** PlatformTiming's `burstGcQuietMs` */
  burstGcQuietMs: number | null
  logger: PlatformLogger
}
