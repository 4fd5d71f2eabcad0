import type { Status } from '../../src/db/stores/statuses.js'
import type { StatusSetting } from '../../src/platform/types.js'
import type { AudienceSnapshot } from '../../schemas/audience.js'
import type { SendStatusBody } from '../../schemas/status.js'
import { checkAudience, checkRecipientFields, type AudienceResolver } from '../audiences/resolve.js'
import { parseTargetNumbers } from './parse.js'

// Who a status goes to: the seed's `targetNumbers` (empty: the own number only), or an `audience` the
// phone's contacts, its status privacy or a saved audience resolve (plugins/audiences). Checked before
// anything is recorded; resolved once the own account is known; kept on the row for a resumed send.

/** Who a send goes to, resolved: the recipients without the own account (empty: the own number only) and the audience snapshot, if any. */
export interface ResolvedRecipients { recipients: string[], audience: AudienceSnapshot | null }

export interface ChosenRecipients {
  /** what `target_numbers` stores: the requested numbers; none when an audience chose them */
  requested: string[]
  resolve: (sessionId: string, own: { number: string | null, lid: string | null }) => Promise<ResolvedRecipients>
}

/** Checks the body's recipient fields now (400 naming the field); resolving waits for `resolve`. */
export function chooseRecipients (audiences: Pick<AudienceResolver, 'resolve'>, body: SendStatusBody): ChosenRecipients {
  checkRecipientFields(body)
  const checked = body.audience === undefined ? null : checkAudience(body.audience)
  const requested = checked === null ? parseTargetNumbers(body.targetNumbers) : []
  return {
    requested,
    resolve: async (sessionId, own) => {
      if (checked === null) return { recipients: requested.filter((n) => n !== own.number), audience: null }
      const { recipients, snapshot } = await audiences.resolve(sessionId, checked, own)
      return { recipients, audience: snapshot }
    }
  }
}

/** A stored status's recipients (the own number not yet left out) and the status_setting it was posted with. */
export function storedRecipients (row: Pick<Status, 'targetNumbers' | 'audience'>): { recipients: string[], statusSetting?: StatusSetting } {
  if (row.audience === null) return { recipients: row.targetNumbers.split(',').filter((n) => n !== '') }
  const snapshot = JSON.parse(row.audience) as AudienceSnapshot
  return { recipients: snapshot.recipients, statusSetting: snapshot.statusSetting }
}
