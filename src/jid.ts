// The platform's JIDs as the service spells them, each in one place. No import here: the platform, the
// stores (src/db) and plugins use these, so it sits beside them rather than inside src/platform; Baileys
// loads only after the server listens (plugins/platform/index.ts), and the helpers that need Baileys' JID
// parser are in src/platform/lid.ts.

/** the broadcast JID every status is sent to and arrives from */
export const STATUS_JID = 'status@broadcast'

/** the server's JID, also the domain of every phone-number user JID */
export const SERVER_JID = 's.whatsapp.net'

/** a phone number's user JID: `<digits>@s.whatsapp.net` */
export const pnJid = (digits: string): string => `${digits}@${SERVER_JID}`

/** the JID a viewer or contact is stored under: its number's JID when the number is known, else the JID it came by (a LID) */
export const contactJid = (number: string | null, jid: string): string => number === null ? jid : pnJid(number)
