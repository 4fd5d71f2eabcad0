import { BadRequest } from '../../src/errors.js'
import { PHONE_PATTERN, PHONE_RULE } from '../../schemas/common.js'

// Lists of recipients as audiences and send-status's targetNumbers (its comma-split parts) take them: each
// entry trimmed and checked against the phone rule, blanks and repeats dropped (the first kept); every bad
// entry is named (the first BAD_NAMED of them).

const PHONE = new RegExp(PHONE_PATTERN)
/** a contact's LID as the audience takes it: its user part and `@lid` (no device) */
const LID = /^[0-9]{1,24}@lid$/
/** bad entries named in one error; the rest are counted */
const BAD_NAMED = 20

const shown = (v: string): string => JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)

/**
 * `raw` checked and normalised; throws a 400 naming `field[i]` for each bad entry. `lids`: a contact's
 * LID (`<lid>@lid`) is accepted as well as a number.
 */
export function parseNumberList (raw: readonly string[], field: string, opts: { lids?: boolean } = {}): string[] {
  const out = new Set<string>()
  const bad: string[] = []
  let badCount = 0
  raw.forEach((entry, i) => {
    const n = entry.trim()
    if (n === '') return
    if (PHONE.test(n) || (opts.lids === true && LID.test(n))) { out.add(n); return }
    if (++badCount <= BAD_NAMED) bad.push(`${field}[${i}] ${shown(n)}`)
  })
  if (badCount > 0) {
    const rule = opts.lids === true ? `${PHONE_RULE}, or a LID (<lid>@lid)` : PHONE_RULE
    const more = badCount > bad.length ? ` and ${badCount - bad.length} more` : ''
    throw new BadRequest(`${field} has ${badCount} invalid ${badCount === 1 ? 'entry' : 'entries'} (each must be ${rule}): ${bad.join(', ')}${more}`)
  }
  return [...out]
}

/**
 * A contact id from the phone (its number, a JID or a LID) as a recipient: digits for a phone number,
 * `<lid>@lid` for a LID; null when it is neither.
 */
export function recipientOf (id: string | null | undefined): string | null {
  if (id === null || id === undefined) return null
  const m = /^\+?([0-9]+)(?::[0-9]+)?(@s\.whatsapp\.net|@c\.us|@lid)?$/.exec(id.trim())
  if (m === null) return null
  if (m[2] === '@lid') return `${m[1]}@lid`
  return PHONE.test(m[1]) ? m[1] : null
}

/** A contact's LID as a recipient (`<lid>@lid`), given with or without `@lid`; null when it is none. */
export function lidOf (lid: string | null | undefined): string | null {
  if (lid === null || lid === undefined) return null
  const m = /^([0-9]+)(?::[0-9]+)?(?:@lid)?$/.exec(lid.trim())
  return m === null ? null : `${m[1]}@lid`
}
