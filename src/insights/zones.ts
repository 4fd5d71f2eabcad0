// Time zones for insights (issue 32): the store counts per absolute quarter hour (floor(ms / 900,000)); a
// quarter hour falls wholly within one local hour, weekday and date of any zone, since every zone's offset
// (DST included) is a multiple of 15 minutes. Offsets come from Intl and are cached per UTC day (one look-up
// at each end of the day; a day whose offset changes is looked up per quarter hour).

const QUARTER = 900_000
const DAY = 86_400_000

export interface LocalTime {
  /** YYYY-MM-DD in the zone */
  date: string
  /** 0–23 */
  hour: number
  /** 0 = Monday … 6 = Sunday */
  weekday: number
}

/** Whether Intl knows the IANA zone name. */
export function isTimeZone (tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz }).format(0)
    return true
  } catch {
    return false
  }
}

const formats = new Map<string, Intl.DateTimeFormat>()

function formatOf (tz: string): Intl.DateTimeFormat {
  let f = formats.get(tz)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' })
    formats.set(tz, f)
  }
  return f
}

/** The zone's offset from UTC at `ms`, in ms (local = UTC + offset). */
export function offsetAt (tz: string, ms: number): number {
  const p: Record<string, number> = {}
  for (const part of formatOf(tz).formatToParts(ms)) if (part.type !== 'literal') p[part.type] = Number(part.value)
  const local = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute)
  return local - Math.floor(ms / 60_000) * 60_000
}

/** Maps instants to local hours, weekdays and dates of one zone (cached offsets: build one per request). */
export function zoneClock (tz: string) {
  const days = new Map<number, number | null>()
  const offset = (ms: number): number => {
    const day = Math.floor(ms / DAY)
    let o = days.get(day)
    if (o === undefined) {
      const start = offsetAt(tz, day * DAY)
      o = start === offsetAt(tz, (day + 1) * DAY - QUARTER) ? start : null
      days.set(day, o)
    }
    return o ?? offsetAt(tz, ms)
  }
  const local = (ms: number): LocalTime => {
    const d = new Date(ms + offset(ms))
    return { date: d.toISOString().slice(0, 10), hour: d.getUTCHours(), weekday: (d.getUTCDay() + 6) % 7 }
  }
  return {
    local,
    /** the local time of a quarter-hour bucket */
    bucket: (bucket: number): LocalTime => local(bucket * QUARTER),
    /** every local date from the one of `from` to the one of `to`, in order */
    dates (from: number, to: number): string[] {
      const out: string[] = []
      const last = local(to).date
      for (let d = new Date(`${local(from).date}T00:00:00Z`); out.length < 100_000; d = new Date(d.getTime() + DAY)) {
        const date = d.toISOString().slice(0, 10)
        out.push(date)
        if (date >= last) break
      }
      return out
    }
  }
}
