import { SessionNotFound, StatusNotFound } from '../../src/errors.js'
import type { StatusReport } from '../../schemas/schedule.js'
import { iso } from '../../src/api-shapes.js'
import { summarise } from '../../src/insights/summary.js'
import type { StatusDeps } from './deps.js'

// The per-status report (issue 24): for everyone the status was meant for (its audience snapshot, or the
// numbers requested), and anyone else who viewed or answered it, when it was delivered, viewed, their
// reaction and their first reply. A view implies the status arrived: without a stored delivery receipt,
// deliveredAt is the view time. A recipient known only by its LID is listed as `<lid>@lid`. The lines are
// built by the one summary function insights keep at expiry (src/insights/summary.ts), so both agree.

export function createReports (deps: Pick<StatusDeps, 'stores'>) {
  const { statuses, viewers: viewerStore } = deps.stores

  async function report (sessionId: string, statusId: string | number): Promise<StatusReport> {
    const session = await deps.stores.sessions.find(sessionId)
    if (session === undefined) throw new SessionNotFound()
    const status = await statuses.find(sessionId, Number(statusId))
    if (status === undefined) throw new StatusNotFound()
    const [deliveries, viewers, reactions, replies] = await Promise.all([
      statuses.deliveries(status.id), viewerStore.list(status.id), viewerStore.reactions(status.id), viewerStore.replies(status.id)
    ])
    const summary = summarise({ status, own: session.ownNumber, deliveries, viewers, reactions, replies })
    const at = (ms: number | null): string | null => ms === null ? null : iso(ms)
    return {
      statusId: String(status.id),
      recipients: summary.lines.map((l) => ({
        number: l.recipient, deliveredAt: at(l.deliveredAt), viewedAt: at(l.viewedAt), reaction: l.reaction, repliedAt: at(l.firstRepliedAt)
      })),
      totals: { recipients: summary.recipients, delivered: summary.delivered, viewed: summary.viewed, reacted: summary.reacted, replied: summary.replied }
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

/** Rows as CSV (RFC 4180): one header row of `columns`, then a row per entry (CRLF line ends). */
export function toCsv<C extends string> (columns: readonly C[], rows: ReadonlyArray<Record<C, string | number | null>>): string {
  const lines = [columns.join(',')]
  for (const r of rows) lines.push(columns.map((c) => csvField(r[c] === null ? null : String(r[c]))).join(','))
  return lines.join('\r\n') + '\r\n'
}

/** The report as CSV: one header row, then a row per recipient. */
export function reportCsv (report: StatusReport): string {
  return toCsv(CSV_COLUMNS, report.recipients)
}
