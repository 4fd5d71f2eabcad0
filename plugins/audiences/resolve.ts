import type { AudienceStore } from '../../src/db/stores/audiences.js'
import { AudienceUnavailable, BadRequest } from '../../src/errors.js'
import type { PhoneStatusPrivacy } from '../../src/platform/types.js'
import { AUDIENCE_ID_PATTERN, type AudienceSnapshot, type SendAudience, type StatusSettingName } from '../../schemas/audience.js'
import { lidOf, parseNumberList, recipientOf } from './numbers.js'

// send-status `audience` → its recipients and the post's status_setting (issue 24). `contacts` are the
// phone's saved contacts (app-state sync, the contacts plugin), LID-only ones included: a contact with a
// LID and no number is a recipient by its LID (`<lid>@lid`). `phone` follows the phone's status privacy:
// contacts → every saved contact; denylist → the saved contacts less its list; allowlist → its list. The
// setting follows WA Web's meaning of `<meta status_setting>` (src/platform/baileys/status-post.ts).

/** What the audiences use of the phone's contacts and status privacy (the `contacts` decorator). */
export interface PhoneContacts {
  savedNumbers: (sessionId: string) => Promise<Array<{ number: string | null, lid: string | null, name: string | null }>>
  statusPrivacy: (sessionId: string) => Promise<PhoneStatusPrivacy | null>
}

/** An audience whose fields are checked and normalised (no look-up yet). */
export type CheckedAudience =
  | { type: 'list', numbers: string[] }
  | { type: 'contacts', except: string[] }
  | { type: 'phone' }
  | { type: 'saved', audienceId: string }

const FIELDS_OF: Record<CheckedAudience['type'], ReadonlyArray<keyof SendAudience>> = {
  list: ['numbers'],
  contacts: ['except'],
  phone: [],
  saved: ['audienceId']
}

/** Checks which fields go with the type and normalises the numbers; 400 naming the field. `field`: where it sits in the request. */
export function checkAudience (audience: SendAudience, field = 'body.audience'): CheckedAudience {
  const allowed = FIELDS_OF[audience.type]
  for (const key of ['numbers', 'except', 'audienceId'] as const) {
    if (audience[key] !== undefined && !allowed.includes(key)) throw new BadRequest(`${field}.${key} does not go with type '${audience.type}'`)
  }
  switch (audience.type) {
    case 'list': {
      if (audience.numbers === undefined) throw new BadRequest(`${field}.numbers is required for type 'list'`)
      const numbers = parseNumberList(audience.numbers, `${field}.numbers`)
      if (numbers.length === 0) throw new BadRequest(`${field}.numbers must hold at least one number`)
      return { type: 'list', numbers }
    }
    case 'contacts':
      return { type: 'contacts', except: parseNumberList(audience.except ?? [], `${field}.except`, { lids: true }) }
    case 'phone':
      return { type: 'phone' }
    case 'saved': {
      const id = audience.audienceId
      if (id === undefined) throw new BadRequest(`${field}.audienceId is required for type 'saved'`)
      if (!new RegExp(AUDIENCE_ID_PATTERN).test(id)) throw new BadRequest(`${field}.audienceId must be a saved audience id (aud_…)`)
      return { type: 'saved', audienceId: id }
    }
  }
}

/** send-status's recipients field: `targetNumbers` or `audience`, never both. */
export function checkRecipientFields (body: { targetNumbers?: string, audience?: SendAudience }, field = 'body'): void {
  if (body.audience !== undefined && body.targetNumbers !== undefined) {
    throw new BadRequest(`${field}.targetNumbers cannot be given with ${field}.audience: the audience chooses the recipients`)
  }
}

export interface ResolvedAudience {
  /** digits or `<lid>@lid`, without the own account */
  recipients: string[]
  snapshot: AudienceSnapshot
}

export interface ResolverDeps {
  audiences: Pick<AudienceStore, 'find'>
  /** the phone's contacts and status privacy; undefined while no plugin provides them */
  contacts: () => PhoneContacts | undefined
}

export function createAudienceResolver (deps: ResolverDeps) {
  async function savedContacts (sessionId: string, field: string): Promise<Array<{ recipient: string, number: string | null, lid: string | null }>> {
    const saved = (await deps.contacts()?.savedNumbers(sessionId) ?? []).map((c) => {
      const number = recipientOf(c.number)
      return { number: number?.endsWith('@lid') === false ? number : null, lid: lidOf(c.lid) }
    })
    // a LID the phone also saved with a number is that contact: addressed once, by its number
    const numbered = new Set(saved.flatMap((c) => c.number !== null && c.lid !== null ? [c.lid] : []))
    const out = []
    for (const { number, lid } of saved) {
      const recipient = number ?? (lid !== null && !numbered.has(lid) ? lid : null)
      if (recipient !== null) out.push({ recipient, number, lid })
    }
    if (out.length === 0) {
      throw new AudienceUnavailable(`${field}: no saved contacts of the phone are known for this session yet ` +
        '(the phone sends them through app-state sync after linking; see GET /api/sessions/{sessionId}/contacts)')
    }
    return out
  }

  /** The saved contacts less `except` (numbers or LIDs, matching a contact by either). */
  async function contactsExcept (sessionId: string, except: readonly string[], field: string): Promise<string[]> {
    const contacts = await savedContacts(sessionId, field)
    const left = new Set(except)
    // a contact named by its number or its LID is left out under both
    for (const c of contacts) {
      if (c.number !== null && c.lid !== null && (left.has(c.number) || left.has(c.lid))) { left.add(c.number); left.add(c.lid) }
    }
    return contacts
      .filter((c) => !left.has(c.recipient) && (c.number === null || !left.has(c.number)) && (c.lid === null || !left.has(c.lid)))
      .map((c) => c.recipient)
  }

  /**
   * The recipients and snapshot of a checked audience. `own`: the session's number and LID, left out.
   * Errors: 400 (an unknown saved audience, an except list that leaves nobody), 409 (the phone's contacts
   * or status privacy not known yet, or a privacy that shares with nobody).
   */
  async function resolve (sessionId: string, audience: CheckedAudience, own: { number: string | null, lid: string | null }, field = 'body.audience'): Promise<ResolvedAudience> {
    const base = { type: audience.type, audienceId: null, name: null, except: null, mode: null }
    let snapshot: Omit<AudienceSnapshot, 'recipients'>
    let recipients: string[]
    switch (audience.type) {
      case 'list':
        snapshot = { ...base, statusSetting: 'allowlist' }
        recipients = audience.numbers
        break
      case 'saved': {
        const saved = await deps.audiences.find(sessionId, audience.audienceId)
        if (saved === undefined) throw new BadRequest(`${field}.audienceId: no saved audience ${audience.audienceId} in this session`)
        snapshot = { ...base, audienceId: saved.id, name: saved.name, statusSetting: 'allowlist' }
        recipients = saved.numbers
        break
      }
      case 'contacts':
        snapshot = { ...base, except: audience.except, statusSetting: audience.except.length > 0 ? 'denylist' : 'contacts' }
        recipients = await contactsExcept(sessionId, audience.except, field)
        break
      case 'phone': {
        const privacy = await deps.contacts()?.statusPrivacy(sessionId) ?? null
        if (privacy === null) {
          throw new AudienceUnavailable(`${field}: the phone's status privacy is not known for this session yet (see GET /api/sessions/{sessionId}/status-privacy)`)
        }
        const listed = [...new Set(privacy.numbers.map(recipientOf).filter((r) => r !== null))]
        const mode: StatusSettingName = privacy.mode
        snapshot = { ...base, mode, except: mode === 'denylist' ? listed : null, statusSetting: mode }
        recipients = mode === 'allowlist' ? listed : await contactsExcept(sessionId, mode === 'denylist' ? listed : [], field)
        break
      }
    }
    recipients = [...new Set(recipients)].filter((r) => r !== own.number && r !== own.lid)
    if (recipients.length === 0) {
      if (audience.type === 'phone') throw new AudienceUnavailable(`${field}: the phone's status privacy (${snapshot.mode ?? ''}) leaves nobody to share with`)
      const why = audience.type === 'contacts' && audience.except.length > 0 ? '.except leaves nobody' : ' holds nobody but the own number'
      throw new BadRequest(`${field}${why}: a status needs at least one recipient`)
    }
    return { recipients, snapshot: { ...snapshot, recipients } }
  }

  return { resolve }
}

export type AudienceResolver = ReturnType<typeof createAudienceResolver>
