/**
 * The soak's arithmetic (bench/soak.ts): time series of samples, their least-squares slope, percentiles
 * of latency windows, and the settings that compress a day into a few minutes of wall time.
 */

/** one value of a series, `t` in ms since the soak's start */
export interface Point { t: number, v: number }

/** Least-squares slope of `points` in units per hour; null with fewer than two distinct times. */
export function slopePerHour (points: readonly Point[]): number | null {
  if (points.length < 2) return null
  const mt = points.reduce((s, p) => s + p.t, 0) / points.length
  const mv = points.reduce((s, p) => s + p.v, 0) / points.length
  let num = 0
  let den = 0
  for (const p of points) {
    num += (p.t - mt) * (p.v - mv)
    den += (p.t - mt) ** 2
  }
  return den === 0 ? null : (num / den) * 3_600_000
}

/** The `p`th percentile (nearest rank) of `values`; null when empty. */
export function percentile (values: readonly number[], p: number): number | null {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

/**
 * The lowest point of each `windowMs` of `points` (windows counted from the soak's start), at that point's time:
 * the floor a collected heap comes back to. A leak raises the floor; the collections' sawtooth above it, which
 * a line through every sample follows as noise, does not.
 */
export function floors (points: readonly Point[], windowMs: number): Point[] {
  const lowest = new Map<number, Point>()
  for (const p of points) {
    const w = Math.floor(p.t / windowMs)
    const low = lowest.get(w)
    if (low === undefined || p.v < low.v) lowest.set(w, p)
  }
  return [...lowest.values()]
}

/** the points with `from` ≤ t < `to` */
export const between = (points: readonly Point[], from: number, to: number): Point[] => points.filter((p) => p.t >= from && p.t < to)

const HOUR = 3_600_000
const DAY = 24 * HOUR

/**
 * The service's settings for a day of `dayMs` wall time: every clock the service has scaled by the same
 * factor (24 h ÷ dayMs). The defaults are scaled as they are (a status lives a day, the cleanup runs every
 * 5 minutes of the day, events are kept a day, the webhook retry schedule 5 s … 12 h); two retention periods
 * are set as an operator who wants a flat database would set them (their defaults, 90 days of insights
 * summaries and 7 days of webhook deliveries, are longer than the soak): summaries 2 days, deliveries 1 day.
 */
export function compressedDayEnv (dayMs: number): Record<string, string> {
  const scale = DAY / dayMs
  const hours = (h: number): string => String(h / scale)
  const ms = (m: number, min: number): string => String(Math.max(min, Math.round(m / scale)))
  return {
    STATUS_TTL_HOURS: hours(24),
    // the cleanup also prunes the event log and webhook deliveries; not under half a second of wall time
    CLEANUP_INTERVAL_MS: ms(300_000, 500),
    EVENTS_RETENTION_HOURS: hours(24),
    INSIGHTS_RETENTION_DAYS: String(2 / scale),
    WEBHOOK_RETENTION_HOURS: hours(24),
    WEBHOOK_BASE_DELAY_MS: ms(5000, 1),
    WEBHOOK_MAX_DELAY_MS: ms(43_200_000, 1)
  }
}
