import { getBinaryNodeChild, jidDecode, jidEncode, jidNormalizedUser, type BinaryNode, type JidServer, type WASocket } from '@whiskeysockets/baileys'
import type { PlatformLogger as Logger } from '../logger.js'
import { STATUS_JID } from '../../jid.js'
import { onStanza } from './socket.js'

// Which devices hold the poster's status sender key. Kept in Baileys' own 'sender-key-memory' key type
// under "status@broadcast" (a map device JID → true), so it is stored with the session's other keys:
// durable across restarts, and gone with them at logout. rc14's relayMessage never reads it for status
// (bl14 Socket/messages-send.js), the LID post path (status-post.ts) does: only devices missing from it get
// a sender key distribution message, the way WA Web keeps ParticipantStore.skDistribList (whatsapp-rust
// wacore/src/send/status.rs resolve_status_skdm_targets).

//
// What counts as holding the key follows WA Web (whatsapp-rust #872, 2026-06-15, "gate SKDM redistribution on
// the primary device", mirroring WA Web's ParticipantStore skDistribList; #999, 2026-07-07, "never memoize
// own devices in the sender-key map", WA Web's `!isMeDevice` guard on markHasSenderKey/markForgetSenderKey):
// - a device holds it only when it AND its user's primary (device 0) are recorded as holding it: a primary
//   marked as lacking it (a retry receipt, status-retry.ts) gets it again with every companion of its user;
// - the poster's own devices (its phone, its other companions) are never recorded: they get it on every post.
// A device marked as lacking the key is kept as `false` (WA Web's has_key=false), not deleted.

export type KeyMemory = Record<string, boolean>

/** The user's primary device (device 0) of a device JID: `<user>@<server>`. */
function primaryOf (jid: string): string | null {
  const d = jidDecode(jid)
  return d === undefined ? null : jidEncode(d.user, d.server as JidServer)
}

/** an own device (the poster's phone or another of its companions): never recorded (whatsapp-rust #999) */
export function isOwnDevice (jid: string, meLid: string | undefined, meId?: string): boolean {
  const user = jidDecode(jid)?.user
  return user !== undefined && (user === jidDecode(meLid)?.user || user === jidDecode(meId)?.user)
}

/** The device holds the key: it and its primary are recorded as holding it (whatsapp-rust #872). */
export function holdsKey (memory: KeyMemory, jid: string): boolean {
  const primary = primaryOf(jid)
  return memory[jid] === true && primary !== null && memory[primary] === true
}

export async function loadKeyMemory (sock: WASocket): Promise<KeyMemory> {
  const stored = await sock.authState.keys.get('sender-key-memory', [STATUS_JID])
  return { ...(stored[STATUS_JID] ?? {}) }
}

async function saveKeyMemory (sock: WASocket, memory: KeyMemory): Promise<void> {
  await sock.authState.keys.set({ 'sender-key-memory': { [STATUS_JID]: memory } })
}

/** These devices got the key in a chunk the platform accepted (own devices are not recorded: whatsapp-rust #999). */
export async function rememberDevices (sock: WASocket, devices: string[]): Promise<void> {
  const me = sock.authState.creds.me
  const others = devices.filter((jid) => !isOwnDevice(jid, me?.lid, me?.id))
  if (others.length === 0) return
  await sock.authState.keys.transaction(async () => {
    const memory = await loadKeyMemory(sock)
    for (const jid of others) memory[jid] = true
    await saveKeyMemory(sock, memory)
  }, STATUS_JID)
}

/**
 * This device lacks the key (it asked for a status again): the next post, or the answer to its retry, gives
 * it a sender key distribution message. WA Web's markForgetSenderKey on a retry receipt (whatsapp-rust
 * src/retry.rs mark_requester_for_fresh_skdm, PR #559, 2026-04-17); own devices are left alone (never recorded).
 */
export async function forgetDevice (sock: WASocket, jid: string): Promise<void> {
  const me = sock.authState.creds.me
  if (isOwnDevice(jid, me?.lid, me?.id)) return
  await sock.authState.keys.transaction(async () => {
    const memory = await loadKeyMemory(sock)
    memory[jid] = false
    await saveKeyMemory(sock, memory)
  }, STATUS_JID)
}

/**
 * Drops the status sender key held under the own LID and the record of who has it: the next post
 * creates a new key and distributes it to every device (whatsapp-rust rotates it on a peer's identity
 * change, src/handlers/notification/device.rs, "for forward secrecy").
 */
export async function rotateStatusSenderKey (sock: WASocket, meLid: string): Promise<void> {
  await sock.authState.keys.set({ 'sender-key': { [statusSenderKeyName(sock, meLid)]: null }, 'sender-key-memory': { [STATUS_JID]: {} } })
}

/** libsignal's SenderKeyName serialisation (Baileys Signal/Group/sender-key-name.js): `group::<address id>::<device>`. */
export function statusSenderKeyName (sock: WASocket, meLid: string): string {
  const address = sock.signalRepository.jidToSignalProtocolAddress(meLid)
  const dot = address.lastIndexOf('.')
  return `${STATUS_JID}::${address.slice(0, dot)}::${address.slice(dot + 1)}`
}

/** The user of an identity-change notification: `<notification type="encrypt" from=USER><identity/></notification>`. */
export function identityChangedUser (node: BinaryNode, meLid: string | undefined, meId: string | undefined): string | null {
  const from = node.attrs.from
  if (typeof from !== 'string' || getBinaryNodeChild(node, 'identity') === undefined) return null
  const user = jidDecode(from)?.user
  if (user === undefined || user === jidDecode(meLid)?.user || user === jidDecode(meId)?.user) return null
  return jidNormalizedUser(from)
}

/**
 * Rotates the status sender key when a contact's identity changes (a reinstall: its devices lost the
 * key, and the old ones must not read later posts). Baileys handles the notification itself
 * (handleIdentityChange); this listens beside it. Returns the listener's removal. Assumptions
 * `identity-change-notification`, `sender-key-types`, `sender-key-name`, `signal-address`, `socket-key-store`.
 */
export function watchIdentityChanges (sock: WASocket, logger: Logger): () => void {
  const onEncrypt = (node: BinaryNode): void => {
    const me = sock.authState.creds.me
    const meLid = me?.lid
    if (typeof meLid !== 'string') return
    const user = identityChangedUser(node, meLid, me?.id)
    if (user === null) return
    sock.authState.keys.transaction(async () => { await rotateStatusSenderKey(sock, meLid) }, STATUS_JID)
      .then(() => { logger.info({ user }, 'a contact\'s identity changed; the status sender key is rotated') })
      .catch((err: unknown) => { logger.warn({ err }, 'could not rotate the status sender key after an identity change') })
  }
  return onStanza(sock, 'notification,type:encrypt', onEncrypt)
}
