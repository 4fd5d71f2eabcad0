// When a schedule's runs fall (issue 24). Pure functions of the rule and the times: no clock, no database.
//
// Minutes and hours (and seconds, a test-only unit) step from the first run's time; days and weeks follow the
// wall clock of the rule's zone (an IANA `timeZone`, else the fixed offset the first time was written with),
// so "every day at 09:00" stays at 09:00 across a daylight-saving change.

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const
export type Weekday = typeof WEEKDAYS[number]
export type RepeatUnit = 'seconds' | 'minutes' | 'hours' | 'days' | 'weeks'

export interface RepeatRule {
  every: number
  unit: RepeatUnit
  /** no run after this time (ms) */
  until?: number
  /** at most this many runs */
  count?: number
  /** `HH:MM` in the rule's zone (days and weeks) */
  timeOfDay?: string
  weekdays?: Weekday[]
  /** IANA zone; without it `offsetMinutes` */
  timeZone?: string
  offsetMinutes: number
}

const MINUTE = 60_000
const DAY = 86_400_000
const STEP_MS: Record<'seconds' | 'minutes' | 'hours', number> = { seconds: 1000, minutes: MINUTE, hours: 60 * MINUTE }
/** a bound on the days or steps looked at for the next run (a rule that matches nothing ends) */
const MAX_STEPS = 10_000

/** The offset (minutes east of UTC) an ISO 8601 time was written with; null when it has none. */
export function writtenOffset (iso: string): number | null {
  const m = /(?:([+-])(\d{2}):?(\d{2})|[Zz])$/.exec(iso.trim())
  if (m === null) return null
  if (m[1] === undefined) return 0
  const minutes = Number(m[2]) * 60 + Number(m[3])
  return m[1] === '-' ? -minutes : minutes
}

/** Whether the IANA zone name is known to this runtime. */
export function isTimeZone (name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name })
    return true
  } catch {
    return false
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>()

/** Minutes east of UTC in the rule's zone at `utc`. */
function offsetAt (rule: Pick<RepeatRule, 'timeZone' | 'offsetMinutes'>, utc: number): number {
  if (rule.timeZone === undefined) return rule.offsetMinutes
  let f = formatters.get(rule.timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: rule.timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
    formatters.set(rule.timeZone, f)
  }
  const parts: Record<string, number> = {}
  for (const p of f.formatToParts(new Date(utc))) if (p.type !== 'literal') parts[p.type] = Number(p.value)
  const asUtc = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second)
  return Math.round((asUtc - Math.floor(utc / 1000) * 1000) / MINUTE)
}

const toLocal = (rule: RepeatRule, utc: number): number => utc + offsetAt(rule, utc) * MINUTE
function fromLocal (rule: RepeatRule, local: number): number {
  const first = local - offsetAt(rule, local) * MINUTE
  return local - offsetAt(rule, first) * MINUTE
}

const weekdayOf = (localMs: number): Weekday => WEEKDAYS[new Date(localMs).getUTCDay()]
const dayIndex = (localMs: number): number => Math.floor(localMs / DAY)
/** days since the epoch of the Monday starting the local day's week */
const mondayOf = (day: number): number => day - ((new Date(day * DAY).getUTCDay() + 6) % 7)

function minutesOfDay (rule: RepeatRule, firstLocal: number): number {
  if (rule.timeOfDay === undefined) return Math.floor((firstLocal - dayIndex(firstLocal) * DAY) / MINUTE)
  const [h, m] = rule.timeOfDay.split(':').map(Number)
  return h * 60 + m
}

/** Whether a local day is one the rule runs on. */
function dayMatches (rule: RepeatRule, day: number, firstDay: number): boolean {
  const weekday = WEEKDAYS[new Date(day * DAY).getUTCDay()]
  if (rule.unit === 'days') return (day - firstDay) % rule.every === 0 && (rule.weekdays === undefined || rule.weekdays.includes(weekday))
  const days = rule.weekdays ?? [WEEKDAYS[new Date(firstDay * DAY).getUTCDay()]]
  const weeks = (mondayOf(day) - mondayOf(firstDay)) / 7
  return weeks % rule.every === 0 && days.includes(weekday)
}

/**
 * The first run at or after `from` (ms), not before `firstAt`; null when none is left (`until` passed, or
 * nothing matches within the bound). Without a rule: `firstAt` itself while it is not before `from`.
 */
export function runAtOrAfter (firstAt: number, rule: RepeatRule | null, from: number): number | null {
  const found = rule === null ? (firstAt >= from ? firstAt : null) : search(firstAt, rule, Math.max(from, firstAt))
  if (found === null || (rule?.until !== undefined && found > rule.until)) return null
  return found
}

/** The run after the one due at `at`. */
export function runAfter (firstAt: number, rule: RepeatRule | null, at: number): number | null {
  return runAtOrAfter(firstAt, rule, at + 1)
}

function search (firstAt: number, rule: RepeatRule, from: number): number | null {
  if (rule.unit === 'seconds' || rule.unit === 'minutes' || rule.unit === 'hours') {
    const step = rule.every * STEP_MS[rule.unit]
    let t = firstAt + Math.ceil((from - firstAt) / step) * step
    for (let i = 0; i < MAX_STEPS; i++, t += step) {
      if (rule.weekdays === undefined || rule.weekdays.includes(weekdayOf(toLocal(rule, t)))) return t
    }
    return null
  }
  const firstLocal = toLocal(rule, firstAt)
  const firstDay = dayIndex(firstLocal)
  const minutes = minutesOfDay(rule, firstLocal)
  let day = Math.max(firstDay, dayIndex(toLocal(rule, from)) - 1)
  for (let i = 0; i < MAX_STEPS; i++, day++) {
    if (!dayMatches(rule, day, firstDay)) continue
    const t = fromLocal(rule, day * DAY + minutes * MINUTE)
    if (t >= from) return t
  }
  return null
}
