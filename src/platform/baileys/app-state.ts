import { getBinaryNodeChild, getBinaryNodeChildren, type BinaryNode, type WASocket } from '@whiskeysockets/baileys'
import { SERVER_JID } from '../../jid.js'

// What the phone shares through app-state sync, as rc14 hands it over (its contacts.upsert and
// settings.update events) and as the service asks for it (a sync from scratch, the status privacy query).
// Every use of rc14's internals here relies on an assumption of assumptions-phone.ts, named with each function.

/** The collection the phone's saved contacts are in (whatsapp-rust `wacore/appstate/src/schemas.rs` CONTACT, LID_CONTACT). */
export const CONTACTS_COLLECTION = 'critical_unblock_low'
/** The collection its status privacy is in (schemas.rs STATUS_PRIVACY). */
export const PRIVACY_COLLECTION = 'regular_high'

/** A contact as rc14's contacts.upsert gives it (Utils/sync-action-utils.js processContactAction, Utils/chat-utils.js lidContactAction). */
export interface UpsertedContact { id: string, name?: string | null, lid?: string | null, phoneNumber?: string | null }

export interface AppStateListeners {
  /** contacts.upsert: only app-state sync emits it in rc14 (a contact or lid_contact action). Assumption `contact-action-upsert`. */
  contacts: (contacts: UpsertedContact[]) => void
  /** settings.update for a statusPrivacy action. Assumption `status-privacy-setting`. */
  statusPrivacy: (value: { mode?: unknown, userJid?: unknown }) => void
  /** the phone shared an app-state key (creds.update myAppStateKeyId). Assumption `app-state-key-share`. */
  keyShared: () => void
}

export function listenAppState (sock: WASocket, on: AppStateListeners): void {
  sock.ev.on('contacts.upsert', (contacts) => { on.contacts(contacts) })
  sock.ev.on('settings.update', (update) => { if (update.setting === 'statusPrivacy') on.statusPrivacy(update.value as { mode?: unknown, userJid?: unknown }) })
  sock.ev.on('creds.update', (update) => { if (typeof update.myAppStateKeyId === 'string' && update.myAppStateKeyId !== '') on.keyShared() })
}

/** The socket has an app-state key from the phone to decrypt the collections with. Assumption `app-state-key-share`. */
export function hasAppStateKey (sock: WASocket): boolean {
  const id = sock.authState.creds.myAppStateKeyId
  return typeof id === 'string' && id !== ''
}

/**
 * Syncs `collection` from scratch: the stored version is dropped, so rc14 asks for a snapshot (or, from the
 * emulator, the whole history) and emits every record it holds as if new; the events it buffered meanwhile are
 * handed to the listeners before this returns (ev.flush()). True when the collection was synced (a version
 * is stored again); false when it could not be (no key yet: rc14 parks it until the key arrives).
 * The version is dropped inside a key-store transaction under the key rc14's resyncs use: a resync under way
 * (a server_sync) commits first, so it cannot store its version over the dropped one, and one starting after
 * it reads no version and emits everything too. Assumptions `app-state-resync`, `event-buffer-flush`, `socket-key-store`.
 */
export async function syncFromScratch (sock: WASocket, collection: typeof CONTACTS_COLLECTION | typeof PRIVACY_COLLECTION): Promise<boolean> {
  const keys = sock.authState.keys
  await keys.transaction(async () => {
    await keys.set({ 'app-state-sync-version': { [collection]: null } })
  }, sock.authState.creds.me?.id ?? 'resync-app-state')
  await sock.resyncAppState([collection], false)
  sock.ev.flush()
  const stored = (await keys.get('app-state-sync-version', [collection]))[collection] as { version?: unknown } | undefined
  return typeof stored?.version === 'number' && stored.version > 0
}

/** One `<list>` of the status privacy answer. */
export interface PrivacyList { type: string, isDefault: boolean, jids: string[] }

/**
 * `<iq xmlns="status" type="get"><privacy/></iq>`: the lists of the answer's `<privacy>` (tulir/whatsmeow
 * broadcast.go GetStatusPrivacy: `<list type default><user jid/>…</list>`, the default one first). An empty
 * answer is [] (whatsmeow then takes "contacts"). Assumption `pre-key-query` (the socket's query()).
 */
export async function queryStatusPrivacy (sock: WASocket, timeoutMs: number): Promise<PrivacyList[]> {
  const answer = await sock.query({ tag: 'iq', attrs: { to: SERVER_JID, type: 'get', xmlns: 'status' }, content: [{ tag: 'privacy', attrs: {} }] }, timeoutMs) as BinaryNode
  const lists = getBinaryNodeChildren(getBinaryNodeChild(answer, 'privacy'), 'list').map((list) => ({
    type: list.attrs.type ?? '',
    isDefault: list.attrs.default === 'true',
    jids: getBinaryNodeChildren(list, 'user').flatMap((u) => typeof u.attrs.jid === 'string' ? [u.attrs.jid] : [])
  }))
  return [...lists.filter((l) => l.isDefault), ...lists.filter((l) => !l.isDefault)]
}
