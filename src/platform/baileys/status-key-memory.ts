import { getBinaryNodeChild, jidDecode, jidNormalizedUser, type BinaryNode, type WASocket } from '@whiskeysockets/baileys'
import type { PlatformLogger as Logger } from '../logger.js'
import { STATUS_JID } from '../session/status-message.js'
import { onStanza } from './socket.js'

// Which devices hold the poster's status sender key. Kept in Baileys' own 'sender-key-memory' key type
// under "status@broadcast" (a map device JID → true), so it is stored with the session's other keys:
// durable across restarts, and gone with them at logout. rc14's relayMessage never reads it for status
// (bl14 Socket/messages-send.js), the LID post path (status-post.ts) does: only devices missing from it get
// a sender key distribution message, the way WA Web keeps ParticipantStore.skDistribList (whatsapp-rust
// wacore/src/send/status.rs resolve_status_skdm_targets).

export type KeyMemory = Record<string, boolean>

export async function loadKeyMemory (sock: WASocket): Promise<KeyMemory> {
  const stored = await sock.authState.keys.get('sender-key-memory', [STATUS_JID])
  return { ...(stored[STATUS_JID] ?? {}) }
}

async function saveKeyMemory (sock: WASocket, memory: KeyMemory): Promise<void> {
  await sock.authState.keys.set({ 'sender-key-memory': { [STATUS_JID]: memory } })
}

/** These devices got the key in a chunk the platform accepted. */
export async function rememberDevices (sock: WASocket, devices: string[]): Promise<void> {
  if (devices.length === 0) return
  await sock.authState.keys.transaction(async () => {
    const memory = await loadKeyMemory(sock)
    for (const jid of devices) memory[jid] = true
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
