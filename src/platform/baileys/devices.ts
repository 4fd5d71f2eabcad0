import { jidDecode, type WASocket } from '@whiskeysockets/baileys'

// Recipients' devices and Signal sessions, through the socket's own functions (assumptions
// `user-devices-cache`, `usync-devices-lid`, `assert-sessions`).

/** The recipients whose devices Baileys has not cached yet (a usync query would be needed for them). */
export async function uncachedRecipients (sock: WASocket, jids: string[]): Promise<string[]> {
  const cache = sock.userDevicesCache as { get: (user: string) => unknown }
  const unknown: string[] = []
  for (const jid of jids) {
    const user = jidDecode(jid)?.user
    if (user === undefined || await cache.get(user) === undefined) unknown.push(jid)
  }
  return unknown
}

/** Looks up the recipients' devices in one usync query and sets up a Signal session with each that lacks one. */
export async function setUpSessions (sock: WASocket, jids: string[]): Promise<void> {
  const devices = await sock.getUSyncDevices(jids, true, false)
  await sock.assertSessions(devices.map((d) => d.jid))
}
