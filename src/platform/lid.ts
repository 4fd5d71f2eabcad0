import { isLidUser as isLid, isPnUser, jidDecode } from '@whiskeysockets/baileys'
import { pnJid } from '../jid.js'

// Viewers may be named by phone-number JID or by LID. Baileys' LIDMappingStore (sock.signalRepository
// .lidMapping) learns pairs from USync device queries (every status send asks with the <lid/> protocol),
// from message addressing and from the server (`lid-mapping.update`), and persists them in the
// 'lid-mapping' key type, i.e. in our auth_keys table, so mappings survive restarts and can be read
// synchronously there (SessionAuth.numberForLid).

/** digits of a phone-number JID (device and agent suffixes dropped), null for anything else */
export function pnDigits (jid: string | null | undefined): string | null {
  if (jid === null || jid === undefined || !(isPnUser(jid) ?? false)) return null
  return jidDecode(jid)?.user ?? null
}

/** a LID user JID (`<lid>@lid`): a status recipient known only by its LID */
export const isLidUser = (jid: string): boolean => isLid(jid) === true

/** the user part of a LID JID (device suffix dropped), null for anything else */
export function lidUserOf (jid: string | null | undefined): string | null {
  return jid !== null && jid !== undefined && isLidUser(jid) ? jidDecode(jid)?.user ?? null : null
}

/** a status recipient's JID: its phone-number JID, or the LID user JID it was given as */
export const recipientJid = (recipient: string): string => isLidUser(recipient) ? recipient : pnJid(recipient)
