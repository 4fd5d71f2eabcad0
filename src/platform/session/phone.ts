import { jidDecode, type WASocket } from '@whiskeysockets/baileys'
import { SerialQueue } from '../async.js'
import {
  CONTACTS_COLLECTION, hasAppStateKey, listenAppState, queryStatusPrivacy, syncFromScratch, type PrivacyList, type UpsertedContact
} from '../baileys/app-state.js'
import { pnJid, SERVER_JID } from '../../jid.js'
import { lidUserOf, pnDigits } from '../lid.js'
import type { PlatformLogger as Logger } from '../logger.js'
import type { PhoneContact, PhoneSink, PhoneStatusPrivacy, StatusPrivacyMode } from '../types.js'

// What the linked phone shares with a session, kept through the PhoneSink (issue 24):
//
// - Its saved contacts arrive through app-state sync as rc14's contacts.upsert (a `contactAction` in
//   critical_unblock_low: whatsapp-rust wacore/appstate/src/schemas.rs CONTACT). rc14 passes no operation to
//   its processSyncAction, so a contact removed on the phone (a syncd REMOVE whose value is an all-absent
//   contactAction: whatsapp-rust src/features/chat_actions.rs remove_contact) comes as an upsert with no name;
//   a saved contact always has one, so that is read as the removal. rc14 emits contacts.upsert for nothing
//   else, and contacts.update only for push names and pictures (not the address book): not read.
// - rc14 syncs app state on its own only after a history sync, which the service turns off; WA Web syncs the
//   critical collections right after pairing, once the phone shared its key (whatsapp-rust
//   src/client/node_io.rs). So the contacts are synced from scratch here when the key arrives and at the first
//   open of each run: that also heals what a crash lost between rc14 storing a collection's new version and
//   the sink committing its contacts, or a removal rc14's event buffer merged into an earlier upsert. Every
//   later change comes as `server_sync`, which rc14 handles (resyncAppState) and turns into contacts.upsert.
// - The status privacy is read with `<iq xmlns="status" type="get"><privacy/></iq>` (whatsmeow
//   GetStatusPrivacy) at every open and again when the phone changes it (a `statusPrivacy` app-state action,
//   rc14's settings.update); the action's own value serves when the query fails.

/** how long the status privacy query may take */
const PRIVACY_QUERY_MS = 20_000

export interface PhoneSyncDeps {
  sessionId: string
  sink: PhoneSink
  log: Logger
  /** the stored LID → number mapping, read synchronously */
  numberForLid: (lidUser: string) => string | null
  /** false once the session is removed */
  live: () => boolean
}

/** A contacts.upsert entry as a PhoneContact (name null: removed); null when its id is not a user's. */
export function toPhoneContact (c: UpsertedContact): PhoneContact | null {
  const id = jidDecode(c.id ?? '')
  if (id === undefined || id.user === '') return null
  const lidOf = (jid: string | null | undefined): string | null => {
    const user = lidUserOf(jid)
    return user === null || user === '' ? null : `${user}@lid`
  }
  if (id.server === 'lid') {
    return { jid: `${id.user}@lid`, number: pnDigits(c.phoneNumber), lid: `${id.user}@lid`, name: nameOf(c) }
  }
  if (id.server !== SERVER_JID) return null
  return { jid: pnJid(id.user), number: id.user, lid: lidOf(c.lid), name: nameOf(c) }
}

function nameOf (c: UpsertedContact): string | null {
  const name = typeof c.name === 'string' ? c.name.trim() : ''
  return name === '' ? null : name
}

/** The privacy list types: whatsmeow types/user.go (contacts, whitelist, blacklist); WA Web's names too. */
const MODES: Record<string, StatusPrivacyMode> = { contacts: 'contacts', whitelist: 'allowlist', allowlist: 'allowlist', blacklist: 'denylist', denylist: 'denylist' }
/** StatusPrivacyAction.StatusDistributionMode (rc14 WAProto): ALLOW_LIST 0, DENY_LIST 1, CONTACTS 2, CLOSE_FRIENDS 3 */
const ACTION_MODES: Record<string, StatusPrivacyMode> = { 0: 'allowlist', ALLOW_LIST: 'allowlist', 1: 'denylist', DENY_LIST: 'denylist', 2: 'contacts', CONTACTS: 'contacts', 3: 'allowlist', CLOSE_FRIENDS: 'allowlist' }

/** A listed JID as the API shows it: digits, or `<lid>@lid` while the LID's number is not known. */
export function listedNumber (jid: string, numberForLid: (lidUser: string) => string | null): string | null {
  const pn = pnDigits(jid)
  if (pn !== null) return pn
  const user = lidUserOf(jid)
  return user === null || user === '' ? null : numberForLid(user) ?? `${user}@lid`
}

/** The default list of the privacy answer as a PhoneStatusPrivacy; none: contacts (whatsmeow's default). Null for an unknown type. */
export function privacyFromLists (lists: PrivacyList[], numberForLid: (lidUser: string) => string | null): PhoneStatusPrivacy | null {
  const list = lists[0]
  if (list === undefined) return { mode: 'contacts', numbers: [] }
  const mode = MODES[list.type]
  return mode === undefined ? null : privacyOf(mode, list.jids, numberForLid)
}

/** A statusPrivacy action's value as a PhoneStatusPrivacy (rc14 gives the mode as the enum's number). */
export function privacyFromAction (value: { mode?: unknown, userJid?: unknown }, numberForLid: (lidUser: string) => string | null): PhoneStatusPrivacy | null {
  const mode = ACTION_MODES[String(value.mode ?? 'ALLOW_LIST')]
  if (mode === undefined) return null
  return privacyOf(mode, Array.isArray(value.userJid) ? value.userJid.filter((j): j is string => typeof j === 'string') : [], numberForLid)
}

/** A mode and its listed JIDs as a PhoneStatusPrivacy: the numbers each once, in order; none for `contacts`. */
function privacyOf (mode: StatusPrivacyMode, jids: readonly string[], numberForLid: (lidUser: string) => string | null): PhoneStatusPrivacy {
  const numbers = mode === 'contacts' ? [] : jids.map((j) => listedNumber(j, numberForLid)).filter((n) => n !== null)
  return { mode, numbers: [...new Set(numbers)] }
}

/** One session's phone sync: rc14's events in, the sink's calls out, in order. */
export class PhoneSync {
  readonly #deps: PhoneSyncDeps
  readonly #writes = new SerialQueue()
  /** status privacy reads (query, then store), one at a time so the last answer is the one stored */
  readonly #privacyReads = new SerialQueue()
  /** the contacts were synced from scratch for the current link in this run */
  #synced = false
  /** a sync from scratch is under way: the contacts seen meanwhile (null: removed), written in one go at its end */
  #collecting: Map<string, PhoneContact | null> | null = null
  /** a sync was asked for while one ran: run once more after it */
  #again = false
  /** the socket the last open was for */
  #sock: WASocket | null = null
  /** counts logouts: a sync that began before one is not stored */
  #epoch = 0

  constructor (deps: PhoneSyncDeps) {
    this.#deps = deps
  }

  /** Hears a new socket's app-state events (also from a socket being replaced: they are the phone's facts). */
  listen (sock: WASocket): void {
    listenAppState(sock, {
      contacts: (list) => { this.#onContacts(list) },
      statusPrivacy: (value) => { this.#readPrivacy(sock, value) },
      // a new key (the first after linking): the collections can be read now, from scratch
      keyShared: () => { this.#synced = false; this.#syncContacts(sock) }
    })
  }

  /** The socket opened: the status privacy is read, and the contacts synced from scratch once per run. */
  onOpen (sock: WASocket): void {
    this.#sock = sock
    this.#readPrivacy(sock)
    if (!this.#synced) this.#syncContacts(sock)
  }

  /** The account was logged out: what the phone shared is forgotten. */
  forget (): void {
    this.#synced = false
    this.#sock = null
    this.#epoch++
    this.#write('could not forget the phone\'s contacts', () => this.#deps.sink.forget(this.#deps.sessionId))
  }

  #onContacts (list: UpsertedContact[]): void {
    if (!this.#deps.live()) return
    const saved: PhoneContact[] = []
    const removed: string[] = []
    for (const c of list) {
      const contact = toPhoneContact(c)
      if (contact === null) continue
      if (this.#collecting !== null) this.#collecting.set(contact.jid, contact.name === null ? null : contact)
      else if (contact.name === null) removed.push(contact.jid)
      else saved.push(contact)
    }
    if (saved.length + removed.length === 0) return
    this.#write('could not store the phone\'s contacts', () => this.#deps.sink.contactsChanged(this.#deps.sessionId, { saved, removed }))
  }

  #syncContacts (sock: WASocket): void {
    if (!this.#deps.live() || !hasAppStateKey(sock)) return
    if (this.#collecting !== null) { this.#again = true; return }
    const seen = new Map<string, PhoneContact | null>()
    this.#collecting = seen
    const log = this.#deps.log
    const epoch = this.#epoch
    syncFromScratch(sock, CONTACTS_COLLECTION)
      .catch((err: unknown) => { log.warn({ err }, 'could not sync the phone\'s contacts'); return false })
      .then((whole) => {
        this.#collecting = null
        // the account was logged out meanwhile: what came belongs to the old link
        if (epoch !== this.#epoch) return
        const contacts = [...seen.values()].filter((c) => c !== null)
        const { sessionId, sink } = this.#deps
        if (whole) {
          this.#synced = true
          log.info({ contacts: contacts.length }, 'phone contacts synced')
          this.#write('could not store the phone\'s contacts', () => sink.contactsReplaced(sessionId, contacts))
        } else if (seen.size > 0) {
          // not all of them: what came is kept as changes, nothing else is removed
          const removed = [...seen].flatMap(([jid, c]) => c === null ? [jid] : [])
          this.#write('could not store the phone\'s contacts', () => sink.contactsChanged(sessionId, { saved: contacts, removed }))
        }
        if (this.#again) {
          this.#again = false
          this.#syncContacts(this.#sock ?? sock)
        }
      })
      .catch((err: unknown) => { log.error({ err }, 'phone contacts sync failed') })
  }

  /** Reads the status privacy (the query); `fromAction`: what the phone's app-state change said, used when the query fails. */
  #readPrivacy (sock: WASocket, fromAction?: { mode?: unknown, userJid?: unknown }): void {
    if (!this.#deps.live()) return
    const { numberForLid, log, sessionId, sink } = this.#deps
    this.#privacyReads.run(async () => {
      let privacy: PhoneStatusPrivacy | null
      try {
        const lists = await queryStatusPrivacy(sock, PRIVACY_QUERY_MS)
        privacy = privacyFromLists(lists, numberForLid)
        if (privacy === null) log.warn({ type: lists[0]?.type }, 'status privacy of an unknown kind; not stored')
      } catch (err) {
        // whatsmeow GetStatusPrivacy: item-not-found means the default, contacts
        if ((err as { data?: unknown }).data === 404) privacy = { mode: 'contacts', numbers: [] }
        else {
          privacy = fromAction === undefined ? null : privacyFromAction(fromAction, numberForLid)
          log.warn({ err, fallback: privacy !== null }, 'status privacy query failed')
        }
      }
      if (privacy !== null) await sink.statusPrivacy(sessionId, privacy)
    }).catch((err: unknown) => { log.error({ err }, 'could not store the phone\'s status privacy') })
  }

  #write (failure: string, task: () => Promise<void>): void {
    this.#writes.run(async () => { await task() }).catch((err: unknown) => {
      // read again at the next run's first open
      this.#synced = false
      this.#deps.log.error({ err }, failure)
    })
  }
}
