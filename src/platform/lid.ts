import { isLidUser, isPnUser, jidDecode, jidNormalizedUser, type LIDMapping } from '@whiskeysockets/baileys'

// Viewers may be named by phone-number JID or by LID. Baileys' LIDMappingStore (sock.signalRepository
// .lidMapping) learns pairs from USync device queries (every status send asks with the <lid/> protocol),
// from message addressing and from the server, and persists them in the 'lid-mapping' key type, i.e. in
// our auth_keys table, so mappings survive restarts.

export interface LidResolver {
  getPNsForLIDs: (lids: string[]) => Promise<LIDMapping[] | null>
}

export const pnJid = (digits: string): string => `${digits}@s.whatsapp.net`

/** digits of a phone-number JID (device and agent suffixes dropped), null for anything else */
export function pnDigits (jid: string | null | undefined): string | null {
  if (jid === null || jid === undefined || !(isPnUser(jid) ?? false)) return null
  return jidDecode(jid)?.user ?? null
}

/** jid → viewer digits: phone-number JIDs directly, LIDs through the mapping, null when unknown */
export async function resolveNumbers (jids: string[], resolver: LidResolver | null): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>()
  const lids: string[] = []
  for (const jid of new Set(jids)) {
    if (isLidUser(jid) ?? false) {
      out.set(jid, null)
      lids.push(jidNormalizedUser(jid))
    } else {
      out.set(jid, pnDigits(jid))
    }
  }
  if (lids.length === 0 || resolver === null) return out
  const pairs = await resolver.getPNsForLIDs(lids)
  const byLidUser = new Map<string, string | null>()
  for (const pair of pairs ?? []) {
    const lidUser = jidDecode(pair.lid)?.user
    if (lidUser !== undefined) byLidUser.set(lidUser, pnDigits(pair.pn))
  }
  for (const jid of out.keys()) {
    if (!(isLidUser(jid) ?? false)) continue
    const lidUser = jidDecode(jid)?.user
    out.set(jid, lidUser === undefined ? null : byLidUser.get(lidUser) ?? null)
  }
  return out
}
