import { jidDecode, type WASocket } from '@whiskeysockets/baileys'

// Recipients' devices, through the socket's own device cache (assumption `user-devices-cache`).

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
