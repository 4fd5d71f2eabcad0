import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { build, type TestApp } from '../helper.js'
import { dbOf } from '../support/db.js'
import { insertSession } from '../support/sessions.js'
import { enterKey, failedAt, findChromium, openBrowser, saveArtifact, skipWithoutChromium } from './browser.js'

// The Insights panel (issue 32) in headless Chromium against the real service: four statuses' summaries with
// figures chosen here are written as expiry writes them (one with views at chosen minutes, one viewed by
// all, one by nobody, one delivered to nobody), and the panel must show the numbers worked out by hand
// below: the totals, one dot per rated status, the views by hour (bar heights in proportion) in the
// browser's own time zone, the splits by type and audience, the top viewers and those who never view, the
// CSV; at desktop width in UTC, and at 360 px in Asia/Kolkata (UTC+5:30, so every view moves to another
// hour) without the page growing wider than the screen. No console error: the page's CSP (no inline
// style or script) holds for the charts.

const chromiumPath = findChromium()
const SID = 'shop'
const MIN = 60_000
const HOUR = 60 * MIN
const DAY = 24 * HOUR
const [A, B, C, D, E, F] = ['15550606011', '15550606012', '15550606013', '15550606014', '15550606015', '15550606016']

interface Line { recipient: string, deliveredAt: number | null, viewedAt: number | null, reacted?: number, replies?: number }
interface Summary { statusId: number, type: string, kind: string, audienceId?: string, name?: string, postedAt: number, lines: Line[] }

/** midnight UTC today: the statuses are posted 1 to 3 days before, at set hours */
const day0 = Math.floor(Date.now() / DAY) * DAY
const S1 = day0 - 3 * DAY + 8 * HOUR
const S2 = day0 - 2 * DAY + 20 * HOUR
const S3 = day0 - DAY + 12 * HOUR
const S4 = day0 - DAY + 6 * HOUR
const SUMMARIES: Summary[] = [
  // to A, B, C, D: D never got it; A viewed after 10 min and liked it, B after 2 h and replied twice, C did not view
  {
    statusId: 11,
    type: 'text',
    kind: 'numbers',
    postedAt: S1,
    lines: [
      { recipient: A, deliveredAt: S1 + MIN, viewedAt: S1 + 10 * MIN, reacted: 1 },
      { recipient: B, deliveredAt: S1 + MIN, viewedAt: S1 + 120 * MIN, replies: 2 },
      { recipient: C, deliveredAt: S1 + MIN, viewedAt: null },
      { recipient: D, deliveredAt: null, viewedAt: null }
    ]
  },
  // the saved audience VIPs (A, E): both viewed, after 5 and 30 min
  {
    statusId: 12,
    type: 'image',
    kind: 'saved',
    audienceId: 'aud_vips',
    name: 'VIPs',
    postedAt: S2,
    lines: [{ recipient: A, deliveredAt: S2 + MIN, viewedAt: S2 + 5 * MIN }, { recipient: E, deliveredAt: S2 + MIN, viewedAt: S2 + 30 * MIN }]
  },
  // delivered to C and D, viewed by nobody
  { statusId: 13, type: 'video', kind: 'numbers', postedAt: S3, lines: [{ recipient: C, deliveredAt: S3 + MIN, viewedAt: null }, { recipient: D, deliveredAt: S3 + MIN, viewedAt: null }] },
  // a list to F, who never got it: no view rate
  { statusId: 14, type: 'audio', kind: 'list', postedAt: S4, lines: [{ recipient: F, deliveredAt: null, viewedAt: null }] }
]
/** every view, for the hour and weekday counts in a zone */
const VIEWS = [S1 + 10 * MIN, S1 + 120 * MIN, S2 + 5 * MIN, S2 + 30 * MIN]

/** Writes the summaries as expiry writes them: the counts are those of the lines. */
async function writeSummaries (t: TestApp): Promise<void> {
  const { db } = dbOf(t.app)
  for (const s of SUMMARIES) {
    const delays = s.lines.flatMap((l) => l.viewedAt === null ? [] : [l.viewedAt - s.postedAt]).sort((a, b) => a - b)
    const { id } = await db.insertInto('insight_statuses').values({
      session_id: SID,
      status_id: s.statusId,
      message_id: `MSG${s.statusId}`,
      type: s.type,
      caption_length: 0,
      audience_kind: s.kind,
      audience_id: s.audienceId ?? null,
      audience_name: s.name ?? null,
      audience_size: s.lines.length,
      posted_at: s.postedAt,
      summarised_at: s.postedAt + DAY,
      recipients: s.lines.length,
      delivered: s.lines.filter((l) => l.deliveredAt !== null).length,
      viewed: delays.length,
      reacted: s.lines.filter((l) => (l.reacted ?? 0) > 0).length,
      replied: s.lines.filter((l) => (l.replies ?? 0) > 0).length,
      first_view_ms: delays[0] ?? null,
      median_view_ms: delays.length === 0 ? null : delays[Math.ceil(delays.length / 2) - 1]
    }).returning('id').executeTakeFirstOrThrow()
    await db.insertInto('insight_recipients').values(s.lines.map((l) => ({
      insight_id: id,
      session_id: SID,
      posted_at: s.postedAt,
      recipient: l.recipient,
      delivered_at: l.deliveredAt,
      viewed_at: l.viewedAt,
      reacted: l.reacted ?? 0,
      replies: l.replies ?? 0
    }))).execute()
  }
  // the phone's contacts name A
  await db.insertInto('phone_contacts').values({ session_id: SID, jid: `${A}@s.whatsapp.net`, number: A, lid: null, name: 'Alice', updated_at: Date.now() }).execute()
}

/** the views per hour of day (index 0 = 00:00–00:59) and per weekday (0 = Monday) in `zone`, worked out with Intl */
function expectedViews (zone: string): { hours: number[], weekdays: number[] } {
  const hours = new Array<number>(24).fill(0)
  const weekdays = new Array<number>(7).fill(0)
  const hourOf = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', hourCycle: 'h23' })
  const dayOf = new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'short' })
  const WEEK = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
  for (const at of VIEWS) {
    hours[Number(hourOf.format(at))]++
    weekdays[WEEK.indexOf(dayOf.format(at))]++
  }
  return { hours, weekdays }
}

async function openInsights (page: Page, url: string): Promise<void> {
  await page.goto(url)
  await enterKey(page)
  await page.locator(`#session-list [data-session-id="${SID}"].selected`).waitFor()
  await page.locator('#insights-details > summary').click()
  await page.locator('#insights-results').waitFor({ state: 'visible' })
}

const texts = async (page: Page, selector: string): Promise<string[]> => (await page.locator(selector).allTextContents()).map((s) => s.trim())

/** the bars of a chart: value and height of each */
async function bars (page: Page, figure: string): Promise<Array<{ value: number, height: number, width: number }>> {
  return await page.locator(`#${figure} rect.bar`).evaluateAll((els) => els.map((el) => ({
    value: Number(el.getAttribute('data-value')),
    height: Number(el.getAttribute('height')),
    width: el.getBoundingClientRect().width
  })))
}

/** values in order, and every height in proportion to its value (the tallest the chart's full height) */
function checkBars (got: Array<{ value: number, height: number }>, values: number[], what: string): void {
  assert.deepEqual(got.map((b) => b.value), values, `${what}: the values`)
  const max = Math.max(...values)
  const full = got[values.indexOf(max)].height
  assert.ok(full > 50, `${what}: the tallest bar is drawn (${full})`)
  for (const [i, b] of got.entries()) assert.ok(Math.abs(b.height - full * values[i] / max) < 0.2, `${what}: bar ${i} is ${b.height} high for ${values[i]} of ${max} (full ${full})`)
}

async function checkFigures (page: Page, zone: string): Promise<void> {
  // the zone as the browser names it (Chromium's ICU says Asia/Calcutta for Asia/Kolkata)
  const named = await page.locator('#insights-tz').textContent() ?? ''
  assert.equal(new Intl.DateTimeFormat('en', { timeZone: named }).resolvedOptions().timeZone, new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone)
  // 4 statuses to 9 recipient lines, 7 delivered, 4 viewed (57%), A's like, B's two replies (one contact replied)
  assert.equal(await page.locator('#ins-statuses').textContent(), '4')
  assert.equal(await page.locator('#ins-statuses-sub').textContent(), '9 recipients · 7 delivered')
  assert.equal(await page.locator('#ins-rate').textContent(), '57%')
  assert.equal(await page.locator('#ins-rate-sub').textContent(), '4 viewed of 7 delivered')
  // times to view 5, 10, 30, 120 min: nearest rank p50 the 2nd (10 min), p90 the 4th (2 h)
  assert.equal(await page.locator('#ins-ttv').textContent(), '10 min')
  assert.equal(await page.locator('#ins-ttv-sub').textContent(), 'median · 90% within 2 h 0 min')
  assert.equal(await page.locator('#ins-reacted').textContent(), '1')
  assert.equal(await page.locator('#ins-replied').textContent(), '1')

  // one dot per status with a rate: 2 of 3, 2 of 2, 0 of 2; the list to F has none
  const dots = await page.locator('#ins-rate-chart circle.rate-dot').evaluateAll((els) => els.map((el) => [el.getAttribute('data-status-id'), el.getAttribute('data-rate')]))
  assert.deepEqual(dots, [['11', '67'], ['12', '100'], ['13', '0']])
  assert.equal(await page.locator('#ins-rate-note').textContent(), '1 status reached nobody yet and has no rate.')

  const expected = expectedViews(zone)
  checkBars(await bars(page, 'ins-hours-chart'), expected.hours, `views by hour in ${zone}`)
  checkBars(await bars(page, 'ins-weekdays-chart'), expected.weekdays, `views by weekday in ${zone}`)

  const row = async (table: string, key: string): Promise<string[]> => await texts(page, `#${table} tbody tr[${key}] > *`)
  assert.deepEqual(await row('ins-by-type', 'data-type="text"'), ['Text', '1', '2 of 3', '67%'])
  assert.deepEqual(await row('ins-by-type', 'data-type="image"'), ['Image', '1', '2 of 2', '100%'])
  assert.deepEqual(await row('ins-by-type', 'data-type="video"'), ['Video', '1', '0 of 2', '0%'])
  assert.deepEqual(await row('ins-by-type', 'data-type="audio"'), ['Audio', '1', '0 of 0', '–'])
  assert.deepEqual(await row('ins-by-audience', 'data-kind="numbers"'), ['Numbers', '2', '2 of 5', '40%'])
  assert.deepEqual(await row('ins-by-audience', 'data-audience-id="aud_vips"'), ['Saved: VIPs', '1', '2 of 2', '100%'])
  assert.deepEqual(await row('ins-by-audience', 'data-kind="list"'), ['List', '1', '0 of 0', '–'])

  // A viewed both (5 and 10 min: median the lower, 5 min), B one after 2 h, E one after 30 min; ties by number
  assert.deepEqual(await page.locator('#ins-top tbody tr').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.number)), [A, B, E])
  assert.deepEqual(await row('ins-top', `data-number="${A}"`), [`Alice+${A}`, '2 of 2', '100%', '5 min'])
  assert.deepEqual(await row('ins-top', `data-number="${B}"`), [`+${B}`, '1 of 1', '100%', '2 h 0 min'])
  assert.deepEqual(await row('ins-top', `data-number="${E}"`), [`+${E}`, '1 of 1', '100%', '30 min'])
  // C and D got two each and viewed none, F got one that never arrived
  assert.equal(await page.locator('#ins-never-title').textContent(), 'Never view (3)')
  assert.deepEqual(await texts(page, '#ins-never tbody tr'), [`+${C}2 statuses`, `+${D}2 statuses`, `+${F}1 status`])
}

test('dashboard insights: the figures written are the figures shown, by hour in the browser\'s zone, at desktop and phone width', { skip: skipWithoutChromium, timeout: 120_000 }, async (t) => {
  if (chromiumPath === undefined) assert.fail('Chromium not found: install the Debian package "chromium" or set CHROMIUM_PATH')
  const s = await build(t, { RATE_LIMIT_MAX: '1000000' })
  await insertSession(s.app, SID)
  await writeSummaries(s)
  const url = await s.listen()

  // the API agrees with the hand count first (else the page would be checked against the wrong numbers)
  const res = await s.api({ url: `/api/sessions/${SID}/insights?tz=UTC` })
  assert.equal(res.statusCode, 200, res.body)
  const { totals } = res.json<{ data: { totals: Record<string, unknown> } }>().data
  assert.deepEqual(totals, {
    statuses: 4, recipients: 9, delivered: 7, viewed: 4, reacted: 1, replied: 1, viewRate: 4 / 7, timeToView: { p50Ms: 10 * MIN, p90Ms: 120 * MIN }
  })

  const desktop = await openBrowser(t, chromiumPath)
  let page = desktop.page
  let step = 'desktop, UTC: the figures'
  try {
    await openInsights(page, url)
    await checkFigures(page, 'UTC')
    t.diagnostic(`screenshot: ${await saveArtifact(page, 'dashboard-insights-desktop') ?? 'not saved'}`)

    step = 'a type chosen: only its statuses'
    await page.locator('#insights-type').selectOption('image')
    await page.locator('#ins-statuses').filter({ hasText: /^1$/ }).waitFor()
    assert.equal(await page.locator('#ins-rate').textContent(), '100%')
    assert.deepEqual(await page.locator('#ins-rate-chart circle.rate-dot').evaluateAll((els) => els.map((el) => el.getAttribute('data-status-id'))), ['12'])
    await page.locator('#insights-type').selectOption('')
    await page.locator('#ins-statuses').filter({ hasText: /^4$/ }).waitFor()

    step = 'the per-contact CSV'
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download every contact (CSV)' }).click()])
    const path = await download.path()
    const csv = readFileSync(path, 'utf8').trim().split(/\r?\n/)
    assert.equal(csv[0], 'number,name,received,viewed,viewRate,medianViewMs,reactions,replies,lastViewedAt')
    assert.equal(csv.length, 1 + 6, 'one row per contact')
    assert.deepEqual(desktop.errors, [], 'the page logged errors')

    step = 'phone width, Asia/Kolkata: the same figures, the views at other hours, nothing wider than the screen'
    const phone = await openBrowser(t, chromiumPath, { width: 360, height: 740 }, { timezoneId: 'Asia/Kolkata' })
    page = phone.page
    await openInsights(page, url)
    await checkFigures(page, 'Asia/Kolkata')
    const widths = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      charts: Array.from(document.querySelectorAll('#insights svg.insights-chart'), (el) => el.getBoundingClientRect().right)
    }))
    assert.ok(widths.page <= 360, `the page is ${widths.page} px wide`)
    for (const right of widths.charts) assert.ok(right <= 360, `a chart ends at ${right} px`)
    for (const b of await bars(page, 'ins-hours-chart')) assert.ok(b.width >= 7, `an hour's bar is ${b.width} px wide`)
    t.diagnostic(`screenshot: ${await saveArtifact(page, 'dashboard-insights-phone') ?? 'not saved'}`)
    assert.deepEqual(phone.errors, [], 'the page logged errors')
  } catch (err) {
    await failedAt(page, 'insights', step, err)
  }
})
