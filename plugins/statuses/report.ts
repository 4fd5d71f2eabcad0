import { SessionNotFound, StatusNotFound } from '../../src/errors.js'
import type { StatusReport } from '../../schemas/schedule.js'
import { iso } from './api-shapes.js'
import { storedRecipients } from './recipients.js'
import type { StatusDeps } from './service.js'

// The per-status report (issue 24): for everyone the status was meant for (its audience snapshot, or the
// numbers requested), and anyone else who viewed or answered it, when it was delivered, viewed, their
// reaction and their first reply. A view implies the status arrived: without a stored delivery receipt,
// deliveredAt is the view time. A recipient known only by its LID is listed as `<lid>@lid`.

interface Line { number: string, deliveredAt: number | null, viewedAt: number | null, reaction: string | null, repliedAt: number | null }

export function createReports (deps: Pick<StatusDeps, 'stores'>) {
  const { statuses, viewers: viewerStore } = deps.stores

  async function report (sessionId: string, statusId: string | number): Promise<StatusReport> {
    const session = await deps.stores.sessions.find(sessionId)
    if (session === undefined) throw new SessionNotFound()
    const status = await statuses.find(sessionId, Number(statusId))
    if (status === undefined) throw new StatusNotFound()
    const own = session.own_number
    const lines = new Map<string, Line>()
    const line = (key: string): Line => {
      let l = lines.get(key)
      if (l === undefined) lines.set(key, l = { number: key, deliveredAt: null, viewedAt: null, reaction: null, repliedAt: null })
      return l
    }
    // who it was meant for: the audience snapshot when an audience chose them, else the requested numbers
    for (const n of storedRecipients(status).recipients) if (n !== own) line(n)
    const [deliveries, viewers, reactions, replies] = await Promise.all([
      statuses.deliveries(status.id), viewerStore.list(status.id), viewerStore.reactions(status.id), viewerStore.replies(status.id)
    ])
    const keyOf = (r: { number: string | null, jid: string }): string | null => (r.number ?? r.jid) === own ? null : r.number ?? r.jid
    for (const d of deliveries) { const k = keyOf(d); if (k !== null) line(k).deliveredAt = d.delivered_at }
    for (const v of viewers) {
      const k = v.is_real === 1 ? keyOf(v) : null
      if (k === null) continue
      const l = line(k)
      l.viewedAt = v.viewed_at
      l.deliveredAt ??= v.viewed_at
    }
    for (const r of reactions) { const k = keyOf(r); if (k !== null && r.emoji !== '') line(k).reaction = r.emoji }
    for (const r of replies) {
      const k = keyOf(r)
      if (k === null) continue
      const l = line(k)
      if (l.repliedAt === null || r.replied_at < l.repliedAt) l.repliedAt = r.replied_at
    }
    const recipients = [...lines.values()].map((l) => ({
      number: l.number,
      deliveredAt: l.deliveredAt === null ? null : iso(l.deliveredAt),
      viewedAt: l.viewedAt === null ? null : iso(l.viewedAt),
      reaction: l.reaction,
      repliedAt: l.repliedAt === null ? null : iso(l.repliedAt)
    }))
    const count = (f: keyof Line): number => recipients.filter((r) => r[f] !== null).length
    return {
      statusId: String(status.id),
      recipients,
      totals: { recipients: recipients.length, delivered: count('deliveredAt'), viewed: count('viewedAt'), reacted: count('reaction'), replied: count('repliedAt') }
    }
  }

  return { report }
}

export const CSV_COLUMNS = ['number', 'deliveredAt', 'viewedAt', 'reaction', 'repliedAt'] as const

/** One CSV field (RFC 4180): quoted when it holds a comma, quote or line break; a leading =, +, -, @ is defused for spreadsheets. */
export function csvField (value: string | null): string {
  if (value === null) return ''
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

/** The report as CSV: one header row, then a row per recipient (CRLF line ends). */
export function reportCsv (report: StatusReport): string {
  const rows = [CSV_COLUMNS.join(',')]
  for (const r of report.recipients) rows.push(CSV_COLUMNS.map((c) => csvField(r[c])).join(','))
  return rows.join('\r\n') + '\r\n'
}
