import type { Generated } from 'kysely'
/** milliseconds since the epoch (as in database.ts) */
type Millis = number

// What the linked phone shares with a session (migration 013), beside database.ts.

/** One of the phone's saved contacts, as app-state sync delivered it. */
export interface PhoneContactTable {
  id: Generated<number>
  session_id: string
  /** the contact's id on the phone: `<number>@s.whatsapp.net` or `<lid>@lid` */
  jid: string
  /** digits; null for a LID-only contact */
  number: string | null
  /** `<lid>@lid`; null while the phone gave none */
  lid: string | null
  name: string | null
  updated_at: Millis
}

/** The phone's status privacy: who its statuses go to. */
export interface PhoneStatusPrivacyTable {
  session_id: string
  mode: 'contacts' | 'allowlist' | 'denylist'
  /** JSON array of digits (or `<lid>@lid`): the mode's list; [] for contacts */
  numbers: string
  updated_at: Millis
}
