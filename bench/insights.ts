/**
 * Insights at scale (issue 32: a session with 50,000 recipients over 90 days answers the insights call
 * within 200 ms at p99). The shape: one linked session; 50,000 contacts; one status a day for 90 days, each to
 * 5,000 of them (a rotating tenth, so every contact is a recipient of 9 statuses): 450,000 recipient lines, of
 * which about 97 % delivered and about half viewed (a fifth of the contacts never view; the others view at an
 * hour and speed of their own), a few reacted or replied. The 89 older statuses are summaries, written straight
 * into the service's SQLite file through a second connection (what expiry would have written: posting 90
 * statuses to 5,000 contacts through Baileys would take most of an hour and measure the sender, not this
 * read); today's is live: posted through the API, then widened in SQL to its 5,000 recipients, so every read
 * summarises it from its own rows as the service does for statuses still within their 24 hours. Then, against
 * the built service (`node dist/src/server.js`) at the default log level, a bounded number of sequential
 * requests, each timed from send to the last byte of its answer:
 * - GET …/insights over the 90 days, the time zone varied (UTC, Europe/Berlin, America/New_York, Asia/Kolkata);
 * - GET …/insights/contacts over the 90 days, sorted by views both ways (the top viewers and those who never view).
 * Both answers are checked against the numbers written, so the figure is of a right answer.
 */
import { SQLite as Database } from '../src/db/sqlite/driver.js'
import { runBench, type Figure } from './lib/bench.js'
import { cpuSeconds } from './lib/procs.js'
import { emulatorApi, linkSessions, serviceApi } from '../test/support/clients.js'
import { API_KEY } from '../test/support/service.js'
import { sleep } from '../test/support/wait.js'
import { loadavg } from 'node:os'
import { join } from 'node:path'

const DAY_MS = 86_400_000
const SESSION = 'insights'
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata']
const TYPES = ['text', 'image', 'video', 'audio', 'url']
const TARGET_MS = 200

interface Shape { contacts: number, days: number, perStatus: number }
interface Written { statuses: number, lines: number, delivered: number, viewed: number, reacted: number, replied: number, neverViewed: number }

/** a small deterministic generator (mulberry32): the same data every run */
function random (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const numberOf = (i: number): string => `4477${String(i).padStart(8, '0')}`

interface Habit { views: number, delayMs: number }
/** each contact's habits: a fifth never view; the others view this share of what they get, this long after posting */
function habits (shape: Shape, rnd: () => number): Habit[] {
  return Array.from({ length: shape.contacts }, (_, i) => ({
    views: i % 5 === 0 ? 0 : 0.3 + rnd() * 0.7,
    delayMs: (1 + rnd() * rnd() * 20) * 3_600_000 * rnd()
  }))
}

/**
 * Writes the summaries (insight_statuses) and their recipient lines (insight_recipients) in one transaction
 * through a second connection to the service's database; the counts of each summary are those of its lines.
 */
function writeSummaries (file: string, shape: Shape, now: number, habit: Habit[], rnd: () => number, viewedBy: Uint8Array): Written {
  const db = new Database(file, { fileMustExist: true })
  const written: Written = { statuses: 0, lines: 0, delivered: 0, viewed: 0, reacted: 0, replied: 0, neverViewed: 0 }
  try {
    db.pragma('busy_timeout = 10000')
    const insertStatus = db.prepare(`insert into insight_statuses (session_id, status_id, message_id, type, caption_length, audience_kind, audience_id,
      audience_name, audience_size, posted_at, summarised_at, recipients, delivered, viewed, reacted, replied, first_view_ms, median_view_ms)
      values (@session_id, @status_id, @message_id, @type, @caption_length, @audience_kind, @audience_id, @audience_name, @audience_size, @posted_at,
      @summarised_at, @recipients, @delivered, @viewed, @reacted, @replied, @first_view_ms, @median_view_ms)`)
    const insertLine = db.prepare(`insert into insight_recipients (insight_id, session_id, posted_at, recipient, delivered_at, viewed_at, reacted, replies)
      values (?, ?, ?, ?, ?, ?, ?, ?)`)
    const slices = Math.max(1, Math.floor(shape.contacts / shape.perStatus))
    db.transaction(() => {
      // days 1 … days − 1 back; day 0 is the live status
      for (let d = 0; d < shape.days - 1; d++) {
        // day d + 1 back from now, posted between 07:00 and 21:00 UTC
        const postedAt = Math.floor((now - (d + 1) * DAY_MS) / DAY_MS) * DAY_MS + (7 + (d * 5) % 14) * 3_600_000 + 60_000 * d
        // day d + 1: the live status (written by widenLive) went to the slice of day 0
        const first = ((d + 1) % slices) * shape.perStatus
        const saved = d % 3 === 0
        const lines: Array<{ recipient: string, deliveredAt: number | null, viewedAt: number | null, reacted: number, replies: number }> = []
        for (let k = 0; k < shape.perStatus; k++) {
          const c = (first + k) % shape.contacts
          const h = habit[c]
          const delivered = rnd() < 0.97
          const viewed = delivered && rnd() < h.views
          const viewedAt = viewed ? postedAt + Math.round(h.delayMs * (0.5 + rnd())) : null
          if (viewed) viewedBy[c] = 1
          lines.push({
            recipient: numberOf(c),
            deliveredAt: delivered ? postedAt + Math.round(rnd() * 60_000) : null,
            viewedAt,
            reacted: viewed && rnd() < 0.04 ? 1 : 0,
            replies: viewed && rnd() < 0.015 ? 1 : 0
          })
        }
        const delays = lines.flatMap((l) => l.viewedAt === null ? [] : [l.viewedAt - postedAt]).sort((a, b) => a - b)
        const counts = {
          delivered: lines.filter((l) => l.deliveredAt !== null).length,
          viewed: delays.length,
          reacted: lines.filter((l) => l.reacted > 0).length,
          replied: lines.filter((l) => l.replies > 0).length
        }
        const { lastInsertRowid } = insertStatus.run({
          session_id: SESSION,
          status_id: 1_000_000 + d,
          message_id: `BENCHINSIGHT${d}`,
          type: TYPES[d % TYPES.length],
          caption_length: (d * 7) % 120,
          audience_kind: saved ? 'saved' : 'numbers',
          audience_id: saved ? 'aud_bench' : null,
          audience_name: saved ? 'Regulars' : null,
          audience_size: shape.perStatus,
          posted_at: postedAt,
          summarised_at: postedAt + DAY_MS,
          recipients: lines.length,
          ...counts,
          first_view_ms: delays.length === 0 ? null : delays[0],
          // nearest rank, the lower middle for an even count
          median_view_ms: delays.length === 0 ? null : delays[Math.ceil(delays.length / 2) - 1]
        })
        for (const l of lines) insertLine.run(lastInsertRowid, SESSION, postedAt, l.recipient, l.deliveredAt, l.viewedAt, l.reacted, l.replies)
        written.statuses++
        written.lines += lines.length
        written.delivered += counts.delivered
        written.viewed += counts.viewed
        written.reacted += counts.reacted
        written.replied += counts.replied
      }
    })()
  } finally {
    db.close()
  }
  return written
}

/**
 * The live status: one posted through the API and real Baileys (to two emulator contacts) a moment ago, widened
 * in SQL to the day's 5,000 contacts (its recipients named in target_numbers as a send to numbers records them,
 * delivery receipts and views as the receipt path stores them), so each read summarises it from its own rows.
 */
function widenLive (file: string, statusId: number, shape: Shape, habit: Habit[], rnd: () => number, viewedBy: Uint8Array, written: Written): void {
  const db = new Database(file, { fileMustExist: true })
  try {
    db.pragma('busy_timeout = 10000')
    const postedAt = Number(db.prepare('select created_at from statuses where id = ?').pluck().get(statusId))
    const numbers = Array.from({ length: shape.perStatus }, (_, k) => numberOf(k % shape.contacts))
    const delivery = db.prepare('insert into status_deliveries (status_id, recipient, number, jid, delivered_at) values (?, ?, ?, ?, ?)')
    const view = db.prepare('insert into viewers (status_id, viewer, number, jid, viewed_at, is_real) values (?, ?, ?, ?, ?, 1)')
    db.transaction(() => {
      // only the rows written here: the two real recipients' receipts go
      for (const table of ['status_deliveries', 'viewers', 'status_reactions', 'status_replies']) db.prepare(`delete from ${table} where status_id = ?`).run(statusId)
      db.prepare('update statuses set target_numbers = ?, contact_count = ? where id = ?').run(numbers.join(','), numbers.length, statusId)
      numbers.forEach((n, k) => {
        if (rnd() >= 0.97) return
        delivery.run(statusId, n, n, `${n}@s.whatsapp.net`, postedAt + Math.round(rnd() * 1000))
        written.delivered++
        if (rnd() >= habit[k].views) return
        view.run(statusId, n, n, `${n}@s.whatsapp.net`, postedAt + 1000 + Math.round(rnd() * 60_000))
        viewedBy[k] = 1
        written.viewed++
      })
    })()
    written.statuses++
    written.lines += numbers.length
  } finally {
    db.close()
  }
}

/** One GET, timed from send to the last byte of the answer; its `data`. */
async function timed<T> (base: string, path: string): Promise<{ ms: number, data: T }> {
  const t0 = performance.now()
  const res = await fetch(`${base}/api${path}`, { headers: { 'x-api-key': API_KEY }, signal: AbortSignal.timeout(30_000) })
  const body = await res.text()
  const ms = performance.now() - t0
  if (!res.ok) throw new Error(`GET ${path} → HTTP ${res.status}: ${body.slice(0, 300)}`)
  return { ms, data: (JSON.parse(body) as { data: T }).data }
}

/** nearest-rank percentile of a list of times */
function percentile (sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]
}

/** `cpuMs`: the service's own CPU per request (from /proc), which other work on the machine moves much less than wall time */
interface Timing { p50: number, p99: number, max: number, n: number, cpuMs: number, load: number }
function summary (times: number[], cpuS: number, load: number): Timing {
  const sorted = [...times].sort((a, b) => a - b)
  const n = sorted.length
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[n - 1], n, cpuMs: cpuS * 1000 / n, load }
}
const ms = (x: number): string => `${x.toFixed(1)} ms`

interface Totals { statuses: number, recipients: number, delivered: number, viewed: number, reacted: number, replied: number }
interface InsightsAnswer { totals: Totals, viewsByHour: number[] }
interface ContactsAnswer { items: Array<{ number: string, viewed: number, received: number }>, nextCursor: string | null }

await runBench('insights', 270_000, async ({ smoke, log, emulator, service }) => {
  const shape: Shape = smoke ? { contacts: 500, days: 9, perStatus: 50 } : { contacts: 50_000, days: 90, perStatus: 5000 }
  const requests = smoke ? 5 : 200
  const warmUp = smoke ? 2 : 10
  /** per call: at most this long for the counted requests (the warm-up a fifth of it), so the script ends within its limit on a busy machine */
  const budgetMs = smoke ? 10_000 : 30_000
  const svc = await service({ env: { LOG_LEVEL: 'info', RATE_LIMIT_MAX: '1000000' } })
  const emu = emulatorApi((await emulator()).controlUrl)
  const api = serviceApi(svc.base)
  await linkSessions(api, emu, [{ sessionId: SESSION, number: '15557000001' }])
  const real = (await emu.addContacts(2, '4478')).map((c) => c.number)
  const posted = await api.post<{ statusId: number }>(`/sessions/${SESSION}/send-status`, { type: 'text', content: 'Open today until 8', targetNumbers: real.join(',') })
  await emu.settled()

  const now = Date.now()
  const t0 = performance.now()
  const file = join(svc.dataDir, 'status-tracker.db')
  const rnd = random(32)
  const habit = habits(shape, rnd)
  const viewedBy = new Uint8Array(shape.contacts)
  const written = writeSummaries(file, shape, now, habit, rnd, viewedBy)
  widenLive(file, posted.statusId, shape, habit, rnd, viewedBy, written)
  written.neverViewed = viewedBy.reduce((n, v) => n + (v === 0 ? 1 : 0), 0)
  // the writes held this process's event loop for seconds: let the HTTP client see the keep-alive sockets the
  // service closed meanwhile, or the first call below goes out on one of them ("fetch failed: other side closed")
  await sleep(200)
  log(`${written.statuses - 1} summaries and a live status: ${written.lines.toLocaleString('en-US')} recipient lines (${written.viewed.toLocaleString('en-US')} views) ` +
    `written in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

  // the range: the 90 days up to now (from = to − 90 days), so every summary is in it
  const to = new Date(now + 60_000).toISOString()
  const from = new Date(now + 60_000 - shape.days * DAY_MS - DAY_MS / 2).toISOString()
  const range = `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`
  const insightsPath = (i: number): string => `/sessions/${SESSION}/insights?${range}&tz=${encodeURIComponent(ZONES[i % ZONES.length])}`
  const contactsPath = (i: number): string =>
    `/sessions/${SESSION}/insights/contacts?${range}&sort=viewed&order=${i % 2 === 0 ? 'desc' : 'asc'}&limit=100`

  // the answers are the numbers written
  const check = await timed<InsightsAnswer>(svc.base, insightsPath(0))
  const { totals } = check.data
  const { statuses, lines: recipients, delivered, viewed, reacted, replied } = written
  const expected = { statuses, recipients, delivered, viewed, reacted, replied }
  for (const [k, v] of Object.entries(expected)) {
    if (totals[k as keyof typeof expected] !== v) throw new Error(`insights totals.${k} = ${totals[k as keyof typeof expected]}, written ${v}`)
  }
  if (check.data.viewsByHour.reduce((a, b) => a + b, 0) !== written.viewed) throw new Error('the views by hour do not add up to the views written')
  const never = await timed<ContactsAnswer>(svc.base, contactsPath(1))
  if (never.data.items.length === 0 || never.data.items[0].viewed !== 0) throw new Error(`the contacts sorted by views ascending start with ${JSON.stringify(never.data.items[0])}`)
  log(`answers checked: ${totals.statuses} statuses, ${totals.recipients.toLocaleString('en-US')} recipient lines, ${totals.viewed.toLocaleString('en-US')} views; ` +
    `${written.neverViewed.toLocaleString('en-US')} contacts never viewed (first call ${ms(check.ms)}, contacts ${ms(never.ms)})`)

  // bounded in time as well as in number: a slow answer ends the run sooner, with fewer requests (said in the figure)
  const run = async (path: (i: number) => string): Promise<Timing> => {
    const warmUntil = performance.now() + budgetMs / 5
    for (let i = 0; i < warmUp && performance.now() < warmUntil; i++) await timed(svc.base, path(i))
    const times: number[] = []
    const until = performance.now() + budgetMs
    const cpu0 = cpuSeconds(svc.pid)
    const load = loadavg()[0]
    for (let i = 0; i < requests && (times.length < 5 || performance.now() < until); i++) times.push((await timed(svc.base, path(i))).ms)
    return summary(times, cpuSeconds(svc.pid) - cpu0, load)
  }
  const insights = await run(insightsPath)
  log(`insights: p50 ${ms(insights.p50)}, p99 ${ms(insights.p99)}, max ${ms(insights.max)} over ${insights.n} requests; service CPU ${ms(insights.cpuMs)} per request`)
  const contacts = await run(contactsPath)
  log(`contacts: p50 ${ms(contacts.p50)}, p99 ${ms(contacts.p99)}, max ${ms(contacts.max)} over ${contacts.n} requests; service CPU ${ms(contacts.cpuMs)} per request`)

  const data = `${shape.contacts.toLocaleString('en-US')} contacts over ${shape.days} days (one status a day to ${shape.perStatus.toLocaleString('en-US')} of them: ` +
    `${written.lines.toLocaleString('en-US')} recipient lines, ${written.viewed.toLocaleString('en-US')} views)`
  const how = (t: Timing): string => `${t.n} sequential requests (at most ${requests}, or ${budgetMs / 1000} s) after up to ${warmUp} not counted, ` +
    `each timed send → last byte; p50 ${ms(t.p50)}, max ${ms(t.max)}; service CPU ${ms(t.cpuMs)} per request; 1-min load ${t.load.toFixed(1)} as it began`
  const figures: Figure[] = [
    {
      id: 'insights.overview.p99',
      name: `GET …/insights, ${data}, p99`,
      value: insights.p99,
      unit: 'ms',
      target: { op: '<=', value: TARGET_MS },
      note: `${how(insights)}; tz varied (${ZONES.join(', ')}), default page of 50 statuses; the newest status live (summarised from its own rows on every read)`
    },
    {
      id: 'insights.contacts.p99',
      name: `GET …/insights/contacts, ${shape.contacts.toLocaleString('en-US')} contacts over ${shape.days} days, sort=viewed desc and asc, limit 100, p99`,
      value: contacts.p99,
      unit: 'ms',
      target: { op: '<=', value: TARGET_MS },
      note: `${how(contacts)}; the top viewers and those who never view, alternately`
    }
  ]
  return figures
})
