import type { SendStatusBody } from '../../schemas/status.js'

// send-status `mentions` (issue 39): at most five numbers (the schema refuses a sixth with a 400 naming `mentions`,
// before anything is recorded or sent; WA Web's publish schema takes 1 to 5 `<mentioned_users><to>`). A mentioned
// number outside the audience is added to it: WA Web's mention message points at the status
// (WAWebStatusMentionRenderMsg.react opens it, and shows "status not found" when the mentioned user cannot see
// it), so naming someone who cannot open the status would tell them of nothing. The own number is never
// mentioned (WA Web's picker lists contacts).

/** The numbers the body mentions, de-duplicated, without the own number. */
export function mentionsOf (body: Pick<SendStatusBody, 'mentions'>, ownNumber: string | null): string[] {
  return [...new Set(body.mentions ?? [])].filter((n) => n !== ownNumber)
}

/** The stored `statuses.mentions` column as numbers. */
export function storedMentions (column: string): string[] {
  return column === '' ? [] : column.split(',')
}

/** The recipients with every mentioned number that is not among them yet (added to the audience, see above). */
export function withMentions (recipients: string[], mentions: string[]): string[] {
  const have = new Set(recipients)
  return [...recipients, ...mentions.filter((m) => !have.has(m))]
}
