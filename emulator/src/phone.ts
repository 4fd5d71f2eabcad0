/**
 * What an account's phone keeps that its linked devices learn through app-state sync: its address book
 * (saved contacts) and its status privacy. The control API sets them (`PUT /accounts/:number/saved-contacts`,
 * `PUT /accounts/:number/status-privacy`); here they become app-state mutations, the key-share message and
 * the answer to the status privacy query, in the platform's shapes:
 *
 * - A saved contact is a `contactAction` in `critical_unblock_low`, index `["contact", "<number>@s.whatsapp.net"]`,
 *   action version 2, value `{ fullName, firstName, lidJid, saveOnPrimaryAddressbook }` (whatsapp-rust
 *   `wacore/appstate/src/schemas.rs` CONTACT; rc14 `Utils/chat-utils.js` chatModificationToAppPatch `contact`;
 *   rc14 `Utils/sync-action-utils.js` processContactAction reads fullName/firstName, lidJid, the number from the
 *   index). `lidJid` is given for LID-migrated contacts only.
 * - A contact removed from the address book is a REMOVE mutation on the same index whose value is an all-absent
 *   `contactAction` (whatsapp-rust `src/features/chat_actions.rs` remove_contact: "WA Web builds its
 *   contactAction before choosing the operation, so a removal carries an all-absent action").
 * - The status privacy is a `statusPrivacy` action in `regular_high`, index `["status_privacy"]`, action
 *   version 7, value `{ mode: ALLOW_LIST | DENY_LIST | CONTACTS, userJid: [...] }` (schemas.rs STATUS_PRIVACY,
 *   module WAWebStatusPrivacySettingSync; the StatusPrivacyAction proto in rc14's WAProto). rc14 emits it as
 *   `settings.update { setting: 'statusPrivacy' }`.
 * - The status privacy query `<iq xmlns="status" type="get"><privacy/></iq>` answers `<privacy><list
 *   type="contacts|whitelist|blacklist" default="true"><user jid/>…</list></privacy>` (tulir/whatsmeow
 *   `broadcast.go` GetStatusPrivacy and `types/user.go` StatusPrivacyType: the list types are spelled
 *   `whitelist`/`blacklist` there, where `<meta status_setting>` and WA Web say allowlist/denylist; the list's
 *   users are JIDs, given here by number).
 */
import { randomBytes } from 'node:crypto'
import { proto, type BinaryNode } from '@whiskeysockets/baileys'
import { normalizeNumber, type Directory, type Party } from './accounts.js'
import { AppStateServer, type CollectionName, type Mutation } from './app-state.js'
import { EmulatorError } from './errors.js'
import type { SavedContactInfo, StatusPrivacyInfo, StatusPrivacyMode } from './types.js'

export const PRIVACY_MODES: readonly StatusPrivacyMode[] = ['contacts', 'allowlist', 'denylist']
/** entries of one PUT at most, and a name's length: the emulator's own limits (no public source), to bound a request */
const MAX_CONTACTS = 100_000
const MAX_NAME = 256

const Mode = proto.SyncActionValue.StatusPrivacyAction.StatusDistributionMode
const MODE_VALUE: Record<StatusPrivacyMode, number> = { contacts: Mode.CONTACTS, allowlist: Mode.ALLOW_LIST, denylist: Mode.DENY_LIST }
/** the list types of the status privacy query (whatsmeow types/user.go) */
const LIST_TYPE: Record<StatusPrivacyMode, string> = { contacts: 'contacts', allowlist: 'whitelist', denylist: 'blacklist' }

const pnJid = (number: string): string => `${number}@s.whatsapp.net`

/** The phone of one account. */
export class Phone {
  readonly appState = new AppStateServer()
  /** number → name, in the order they were saved */
  readonly contacts = new Map<string, string>()
  privacy: StatusPrivacyInfo = { mode: 'contacts', numbers: [] }
  /** companion ids the app-state key was shared with */
  readonly keyShared = new Set<number>()
}

/** `{ contacts: [{ number, name }] }` checked: numbers normalised, names trimmed, no number twice. */
export function checkSavedContacts (body: unknown): Array<{ number: string, name: string }> {
  const list = (body as { contacts?: unknown } | null)?.contacts
  if (!Array.isArray(list)) throw new EmulatorError(400, 'contacts (array of { number, name }) is required')
  if (list.length > MAX_CONTACTS) throw new EmulatorError(400, `contacts holds at most ${MAX_CONTACTS} entries`)
  const seen = new Set<string>()
  return list.map((entry: unknown, i) => {
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new EmulatorError(400, `contacts[${i}] must be an object { number, name }`)
    const { number: raw, name: rawName, ...rest } = entry as Record<string, unknown>
    const extra = Object.keys(rest)
    if (extra.length > 0) throw new EmulatorError(400, `contacts[${i}].${extra[0]} is not a field (number, name)`)
    let number: string
    try { number = normalizeNumber(raw) } catch (error) { throw new EmulatorError(400, `contacts[${i}].number: ${(error as Error).message}`) }
    if (typeof rawName !== 'string' || rawName.trim() === '' || rawName.trim().length > MAX_NAME) {
      throw new EmulatorError(400, `contacts[${i}].name must be a string of 1 to ${MAX_NAME} characters`)
    }
    if (seen.has(number)) throw new EmulatorError(400, `contacts[${i}].number ${number} is listed twice`)
    seen.add(number)
    return { number, name: rawName.trim() }
  })
}

/** `{ mode, numbers }` checked: numbers go with allowlist and denylist (none, or an empty list, with contacts). */
export function checkStatusPrivacy (body: unknown): StatusPrivacyInfo {
  const { mode, numbers, ...rest } = (body ?? {}) as Record<string, unknown>
  const extra = Object.keys(rest)
  if (extra.length > 0) throw new EmulatorError(400, `${extra[0]} is not a field (mode, numbers)`)
  if (typeof mode !== 'string' || !PRIVACY_MODES.includes(mode as StatusPrivacyMode)) {
    throw new EmulatorError(400, `mode must be one of ${PRIVACY_MODES.join(', ')}`)
  }
  if (numbers !== undefined && !Array.isArray(numbers)) throw new EmulatorError(400, 'numbers must be an array of numbers')
  const list = (numbers ?? []) as unknown[]
  // the emulator's own check (no public source): a contacts privacy has no list to hold
  if (mode === 'contacts' && list.length > 0) throw new EmulatorError(400, 'numbers go with allowlist and denylist; mode contacts takes none')
  if (list.length > MAX_CONTACTS) throw new EmulatorError(400, `numbers holds at most ${MAX_CONTACTS} entries`)
  const out: string[] = []
  list.forEach((raw, i) => {
    let n: string
    try { n = normalizeNumber(raw) } catch (error) { throw new EmulatorError(400, `numbers[${i}]: ${(error as Error).message}`) }
    if (!out.includes(n)) out.push(n)
  })
  return { mode: mode as StatusPrivacyMode, numbers: out }
}

/**
 * The party behind each number, creating those not known yet as contacts (LID-migrated like the account,
 * or legacy for a legacy account's phone, as usync creates them).
 */
export function partiesFor (directory: Directory, numbers: readonly string[], legacy: boolean): Party[] {
  return numbers.map((n) => directory.getByNumber(n) ?? directory.createContact(n, 1, legacy))
}

const info = (party: Party, name: string): SavedContactInfo => ({ number: party.number, name, lid: party.lid })

export function savedContactsOf (directory: Directory, phone: Phone): SavedContactInfo[] {
  return [...phone.contacts].map(([number, name]) => info(directory.getByNumber(number)!, name))
}

/**
 * Makes `list` the phone's address book; the mutations that take the linked devices there (removed contacts
 * first, then new and renamed ones, in the list's order). Unchanged contacts write nothing.
 */
export function replaceSavedContacts (directory: Directory, phone: Phone, list: ReadonlyArray<{ number: string, name: string }>, legacy: boolean): Mutation[] {
  const parties = partiesFor(directory, list.map((c) => c.number), legacy)
  const now = Date.now()
  const mutations: Mutation[] = []
  const next = new Map(list.map((c) => [c.number, c.name]))
  for (const number of phone.contacts.keys()) {
    if (!next.has(number)) {
      mutations.push({ index: ['contact', pnJid(number)], value: { contactAction: {}, timestamp: now }, apiVersion: 2, operation: 'remove' })
    }
  }
  list.forEach((c, i) => {
    if (phone.contacts.get(c.number) === c.name) return
    const party = parties[i]
    const contactAction: proto.SyncActionValue.IContactAction = {
      fullName: c.name,
      // the emulator's own choice: the control API takes one name, and the first word stands in for the phone's given name
      firstName: c.name.split(/\s+/)[0],
      ...(party.legacy ? {} : { lidJid: `${party.lid}@lid` }),
      saveOnPrimaryAddressbook: true
    }
    mutations.push({ index: ['contact', pnJid(c.number)], value: { contactAction, timestamp: now }, apiVersion: 2, operation: 'set' })
  })
  phone.contacts.clear()
  for (const c of list) phone.contacts.set(c.number, c.name)
  return mutations
}

/** Sets the status privacy; the mutation that tells the linked devices. */
export function replaceStatusPrivacy (directory: Directory, phone: Phone, privacy: StatusPrivacyInfo, legacy: boolean): Mutation {
  partiesFor(directory, privacy.numbers, legacy)
  phone.privacy = { mode: privacy.mode, numbers: [...privacy.numbers] }
  return {
    index: ['status_privacy'],
    value: { statusPrivacy: { mode: MODE_VALUE[privacy.mode], userJid: privacy.numbers.map(pnJid) }, timestamp: Date.now() },
    apiVersion: 7,
    operation: 'set'
  }
}

/** The answer to `<iq xmlns="status" type="get"><privacy/></iq>`. */
export function statusPrivacyAnswer (phone: Phone): BinaryNode {
  const { mode, numbers } = phone.privacy
  return {
    tag: 'privacy',
    attrs: {},
    content: [{
      tag: 'list',
      attrs: { type: LIST_TYPE[mode], default: 'true' },
      content: numbers.map((n) => ({ tag: 'user', attrs: { jid: pnJid(n) } }))
    }]
  }
}

/** The collections a change of the address book or of the status privacy writes. */
export const CONTACTS_COLLECTION: CollectionName = 'critical_unblock_low'
export const PRIVACY_COLLECTION: CollectionName = 'regular_high'

/** A message id as a phone makes it (interactions, the phone's own messages): 3A + 18 hex digits, the shape phones' ids have; nothing checks it. */
export const phoneMessageId = (): string => `3A${randomBytes(9).toString('hex').toUpperCase()}`
