import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { sql } from 'kysely'
import { form, jpeg } from '../uploads/fixtures.js'
import { build, waitFor, type TestApp } from '../helper.js'
import { mediaTrusted, startStack, type Stack } from '../stack.js'
import { dbOf } from '../support/db.js'

// Issue 32 end to end: four statuses (text and image; to numbers, a list and a saved audience) posted through
// real Baileys to the emulator, viewed, delivered, reacted to and replied to by chosen contacts at chosen times
// (grouped receipts carry each viewer's `t`; the posts' times are set on their rows). Every figure below is
// worked out by hand from that scenario, in Asia/Kolkata (UTC+05:30, no DST: one view crosses its midnight and
// not UTC's) and in UTC. The same figures must come back while the statuses are live and after they expired
// (a restart with a short STATUS_TTL_HOURS): then no status, viewer or media is left, only the summaries;
// with INSIGHTS_RETENTION_DAYS=0 not even those.

const OWN = '4915600000001'
const ANA = '4915600000011'
const BEN = '4915600000012'
const CAT = '4915600000013'
const DAN = '4915600000014'
const EVE = '4915600000015'
const SID = 'insights'
const MIN = 60_000
const HOUR = 3_600_000
const DAY = 24 * HOUR
const KOLKATA = 5.5 * HOUR

/**
 * B: a Kolkata midnight (UTC 18:30) 26 to 50 hours ago, so that every time of the scenario (B to B + 24 h 20 min)
 * is past and within a 72-hour STATUS_TTL_HOURS.
 */
const B = Math.floor((Date.now() - 26 * HOUR + KOLKATA) / DAY) * DAY - KOLKATA
const at = (ms: number): string => new Date(B + ms).toISOString()
/** Kolkata's date of B (d0); UTC's date of B is d0's eve (B is 18:30 UTC the day before) */
const D0 = new Date(B + KOLKATA).toISOString().slice(0, 10)
const UTC_EVE = new Date(B).toISOString().slice(0, 10)
/** index of d0 in viewsByWeekday (0 = Monday) */
const WD0 = (new Date(B + KOLKATA).getUTCDay() + 6) % 7

// The scenario, times after B (Kolkata wall clock, as B is its midnight):
// S4 02:00 text to DAN, EVE (numbers): EVE delivered 02:30; nobody views it.
// S1 08:00 text to ANA, BEN, CAT (numbers): ANA views 08:15 and reacts 👍; BEN views 09:40 and replies once;
//    CAT only delivered 08:05.
// S2 10:00 image "sunset" to the list BEN, CAT, DAN; EVE (not meant) views it too: BEN 10:30, DAN 10:45 (reacts 😂 then
//    takes it back), CAT 12:00 (reacts ❤️, replies twice), EVE 13:00.
// S3 21:00 text to the saved audience "Team" (ANA, DAN, EVE): ANA views 23:30 and replies; DAN views 00:20 the next
//    day; EVE only delivered 21:10.
const POSTED = { s4: 2 * HOUR, s1: 8 * HOUR, s2: 10 * HOUR, s3: 21 * HOUR }
const S1_TEXT = 'morning news'
const S3_TEXT = 'team: see you at 9'
const S4_TEXT = 'nobody looks'
const CAPTION = 'sunset'

interface Split { statuses: number, recipients: number, delivered: number, viewed: number, viewRate: number | null, reacted: number, replied: number }
interface Insights {
  from: string
  to: string
  tz: string
  totals: Omit<Split, 'viewRate'> & { viewRate: number | null, timeToView: { p50Ms: number | null, p90Ms: number | null } }
  viewsByHour: number[]
  viewsByWeekday: number[]
  daily: Array<{ date: string, statuses: number, delivered: number, viewed: number, reacted: number, replied: number }>
  byType: Array<{ type: string } & Split>
  byAudience: Array<{ kind: string, audienceId: string | null, name: string | null } & Split>
  statuses: Array<{
    statusId: string
    live: boolean
    type: string
    captionLength: number
    audience: { kind: string, audienceId: string | null, name: string | null, size: number }
    postedAt: string
    recipients: number
    delivered: number
    viewed: number
    reacted: number
    replied: number
    viewRate: number | null
    firstViewMs: number | null
    medianViewMs: number | null
  }>
  nextCursor: string | null
}
interface ContactLine {
  number: string
  name: string | null
  received: number
  viewed: number
  viewRate: number | null
  medianViewMs: number | null
  reactions: number
  replies: number
  lastViewedAt: string | null
}

/** hours of the day (or days of the week) with their counts, the rest 0 */
function spread (length: number, counts: Record<number, number>): number[] {
  return Array.from({ length }, (_, i) => counts[i] ?? 0)
}

/** What the scenario comes to, worked out by hand (ids: the statuses' ids, aud: the saved audience's id). */
function expected (ids: Record<'s1' | 's2' | 's3' | 's4', string>, aud: string, live: boolean) {
  // times to view: S1 ANA 15 min, BEN 100 min; S2 BEN 30, DAN 45, CAT 120, EVE 180 min; S3 ANA 150, DAN 200 min
  // sorted: 15 30 45 100 120 150 180 200 (min); nearest rank p50 = 4th = 100 min, p90 = ceil(7.2) = 8th = 200 min
  const totals = {
    statuses: 4, recipients: 12, delivered: 11, viewed: 8, reacted: 2, replied: 3, viewRate: 8 / 11, timeToView: { p50Ms: 100 * MIN, p90Ms: 200 * MIN }
  }
  const statuses: Insights['statuses'] = [
    // newest first; captionLength: a text status's text ('team: see you at 9', 'morning news', 'nobody looks'), the image's caption
    {
      statusId: ids.s3, live, type: 'text', captionLength: 18, audience: { kind: 'saved', audienceId: aud, name: 'Team', size: 3 }, postedAt: at(POSTED.s3),
      recipients: 3, delivered: 3, viewed: 2, reacted: 0, replied: 1, viewRate: 2 / 3, firstViewMs: 150 * MIN, medianViewMs: 150 * MIN
    },
    {
      statusId: ids.s2, live, type: 'image', captionLength: 6, audience: { kind: 'list', audienceId: null, name: null, size: 3 }, postedAt: at(POSTED.s2),
      recipients: 4, delivered: 4, viewed: 4, reacted: 1, replied: 1, viewRate: 1, firstViewMs: 30 * MIN, medianViewMs: 45 * MIN
    },
    {
      statusId: ids.s1, live, type: 'text', captionLength: 12, audience: { kind: 'numbers', audienceId: null, name: null, size: 3 }, postedAt: at(POSTED.s1),
      recipients: 3, delivered: 3, viewed: 2, reacted: 1, replied: 1, viewRate: 2 / 3, firstViewMs: 15 * MIN, medianViewMs: 15 * MIN
    },
    {
      statusId: ids.s4, live, type: 'text', captionLength: 12, audience: { kind: 'numbers', audienceId: null, name: null, size: 2 }, postedAt: at(POSTED.s4),
      recipients: 2, delivered: 1, viewed: 0, reacted: 0, replied: 0, viewRate: 0, firstViewMs: null, medianViewMs: null
    }
  ]
  const byType: Insights['byType'] = [
    { type: 'image', statuses: 1, recipients: 4, delivered: 4, viewed: 4, viewRate: 1, reacted: 1, replied: 1 },
    { type: 'text', statuses: 3, recipients: 8, delivered: 7, viewed: 4, viewRate: 4 / 7, reacted: 1, replied: 2 }
  ]
  const byAudience: Insights['byAudience'] = [
    { kind: 'list', audienceId: null, name: null, statuses: 1, recipients: 4, delivered: 4, viewed: 4, viewRate: 1, reacted: 1, replied: 1 },
    { kind: 'numbers', audienceId: null, name: null, statuses: 2, recipients: 5, delivered: 4, viewed: 2, viewRate: 0.5, reacted: 1, replied: 1 },
    { kind: 'saved', audienceId: aud, name: 'Team', statuses: 1, recipients: 3, delivered: 3, viewed: 2, viewRate: 2 / 3, reacted: 0, replied: 1 }
  ]
  // views at (Kolkata) 08:15 09:40 10:30 10:45 12:00 13:00 23:30 and 00:20 the next day;
  // in UTC (5:30 earlier) 02:45 04:10 05:00 05:15 06:30 07:30 18:00 18:50, all on d0
  const kolkata = {
    viewsByHour: spread(24, { 0: 1, 8: 1, 9: 1, 10: 2, 12: 1, 13: 1, 23: 1 }),
    viewsByWeekday: spread(7, { [WD0]: 7, [(WD0 + 1) % 7]: 1 }),
    // all four posted on d0 (Kolkata)
    daily: [{ date: D0, statuses: 4, delivered: 11, viewed: 8, reacted: 2, replied: 3 }]
  }
  const utc = {
    viewsByHour: spread(24, { 2: 1, 4: 1, 5: 2, 6: 1, 7: 1, 18: 2 }),
    viewsByWeekday: spread(7, { [WD0]: 8 }),
    // S4 (02:00 Kolkata) was posted at 20:30 UTC the day before
    daily: [
      { date: UTC_EVE, statuses: 1, delivered: 1, viewed: 0, reacted: 0, replied: 0 },
      { date: D0, statuses: 3, delivered: 10, viewed: 8, reacted: 2, replied: 3 }
    ]
  }
  // per contact (received: statuses they are a line of; viewRate: viewed ÷ delivered to them; median: lower middle)
  const contacts: ContactLine[] = [
    { number: ANA, name: 'Ana', received: 2, viewed: 2, viewRate: 1, medianViewMs: 15 * MIN, reactions: 1, replies: 1, lastViewedAt: at(23 * HOUR + 30 * MIN) },
    { number: BEN, name: null, received: 2, viewed: 2, viewRate: 1, medianViewMs: 30 * MIN, reactions: 0, replies: 1, lastViewedAt: at(10 * HOUR + 30 * MIN) },
    // DAN: S4 never reached him, so 2 delivered, 2 viewed
    { number: DAN, name: null, received: 3, viewed: 2, viewRate: 1, medianViewMs: 45 * MIN, reactions: 0, replies: 0, lastViewedAt: at(24 * HOUR + 20 * MIN) },
    // CAT: two replies to one status
    { number: CAT, name: null, received: 2, viewed: 1, viewRate: 0.5, medianViewMs: 120 * MIN, reactions: 1, replies: 2, lastViewedAt: at(12 * HOUR) },
    { number: EVE, name: null, received: 3, viewed: 1, viewRate: 1 / 3, medianViewMs: 180 * MIN, reactions: 0, replies: 0, lastViewedAt: at(13 * HOUR) }
  ]
  return { totals, statuses, byType, byAudience, kolkata, utc, contacts }
}

/** rates compared to 6 places (8 / 11 may come out of SQL a last bit apart) */
function rounded<T> (value: T): T {
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1e6) / 1e6 : v)) as T
}

async function get<T> (app: Pick<TestApp, 'api'>, url: string): Promise<T> {
  const res = await app.api({ method: 'GET', url })
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`)
  const body = res.json<{ success: boolean, data: T }>()
  assert.equal(body.success, true)
  return body.data
}

const FROM = new Date(B - DAY).toISOString()

/** Every figure of the insights and contacts calls against the hand-worked ones. */
async function checkFigures (t: TestContext, app: Pick<TestApp, 'api'>, want: ReturnType<typeof expected>, when: string): Promise<void> {
  const base = `/api/sessions/${SID}/insights?from=${encodeURIComponent(FROM)}`
  const byKey = <T extends { type?: string, kind?: string }>(list: T[]): T[] => [...list].sort((a, b) => (a.type ?? a.kind ?? '').localeCompare(b.type ?? b.kind ?? ''))
  // days with nothing at all may or may not be listed: only the others are compared
  const busy = (daily: Insights['daily']) => daily.filter((d) => d.statuses + d.delivered + d.viewed + d.reacted + d.replied > 0)

  for (const [tz, zone] of [['Asia/Kolkata', want.kolkata], ['UTC', want.utc]] as const) {
    const got = await get<Insights>(app, `${base}${tz === 'UTC' ? '' : `&tz=${encodeURIComponent(tz)}`}`)
    assert.equal(got.tz, tz, when)
    assert.equal(got.from, FROM, when)
    assert.deepEqual(rounded(got.totals), rounded(want.totals), `${when}: totals`)
    assert.deepEqual(got.viewsByHour, zone.viewsByHour, `${when}: viewsByHour in ${tz}`)
    assert.deepEqual(got.viewsByWeekday, zone.viewsByWeekday, `${when}: viewsByWeekday in ${tz}`)
    assert.deepEqual(busy(got.daily), zone.daily, `${when}: daily in ${tz}`)
    assert.deepEqual(rounded(byKey(got.byType)), rounded(want.byType), `${when}: byType`)
    assert.deepEqual(rounded(byKey(got.byAudience)), rounded(want.byAudience), `${when}: byAudience`)
    assert.deepEqual(rounded(got.statuses), rounded(want.statuses), `${when}: statuses`)
    assert.equal(got.nextCursor, null)
  }

  // filters: by type, by audience kind, by saved audience id
  const texts = await get<Insights>(app, `${base}&type=text`)
  assert.deepEqual(texts.statuses.map((s) => s.statusId), want.statuses.filter((s) => s.type === 'text').map((s) => s.statusId), `${when}: type=text`)
  assert.deepEqual([texts.totals.statuses, texts.totals.delivered, texts.totals.viewed], [3, 7, 4], `${when}: type=text totals`)
  const numbers = await get<Insights>(app, `${base}&audience=numbers`)
  assert.deepEqual(rounded(numbers.totals), rounded({
    statuses: 2, recipients: 5, delivered: 4, viewed: 2, reacted: 1, replied: 1, viewRate: 0.5, timeToView: { p50Ms: 15 * MIN, p90Ms: 100 * MIN }
  }), `${when}: audience=numbers`)
  const saved = want.byAudience.find((a) => a.kind === 'saved')?.audienceId ?? ''
  const team = await get<Insights>(app, `${base}&audience=${saved}`)
  assert.deepEqual(team.statuses.map((s) => s.statusId), [want.statuses[0].statusId], `${when}: audience=${saved}`)
  // paging, newest first
  const first = await get<Insights>(app, `${base}&limit=3`)
  assert.deepEqual(first.statuses.map((s) => s.statusId), want.statuses.slice(0, 3).map((s) => s.statusId))
  assert.ok(first.nextCursor !== null, 'a cursor to the fourth')
  const second = await get<Insights>(app, `${base}&limit=3&cursor=${encodeURIComponent(first.nextCursor)}`)
  assert.deepEqual(second.statuses.map((s) => s.statusId), [want.statuses[3].statusId])
  assert.equal(second.nextCursor, null)

  // contacts: by views (ties by number), the other way round, by median, and as CSV
  const contacts = `/api/sessions/${SID}/insights/contacts?from=${encodeURIComponent(FROM)}`
  const lines = await get<{ items: ContactLine[], nextCursor: string | null }>(app, contacts)
  assert.deepEqual(rounded(lines.items), rounded(want.contacts), `${when}: contacts`)
  const asc = await get<{ items: ContactLine[] }>(app, `${contacts}&sort=viewed&order=asc`)
  assert.deepEqual(asc.items.map((c) => c.number), [CAT, EVE, ANA, BEN, DAN], `${when}: never/least viewing first`)
  const fastest = await get<{ items: ContactLine[] }>(app, `${contacts}&sort=medianViewMs&order=asc`)
  assert.deepEqual(fastest.items.map((c) => c.number), [ANA, BEN, DAN, CAT, EVE], `${when}: by median time to view`)
  const paged = await get<{ items: ContactLine[], nextCursor: string | null }>(app, `${contacts}&limit=2`)
  assert.deepEqual(paged.items.map((c) => c.number), [ANA, BEN])
  assert.ok(paged.nextCursor !== null)
  const rest = await get<{ items: ContactLine[], nextCursor: string | null }>(app, `${contacts}&limit=2&cursor=${encodeURIComponent(paged.nextCursor)}`)
  assert.deepEqual(rest.items.map((c) => c.number), [DAN, CAT])

  const csv = await app.api({ method: 'GET', url: `${contacts}&format=csv` })
  assert.equal(csv.statusCode, 200, csv.body)
  assert.match(String(csv.headers['content-type']), /^text\/csv/)
  const rows = csv.body.trimEnd().split(/\r?\n/)
  assert.equal(rows[0], 'number,name,received,viewed,viewRate,medianViewMs,reactions,replies,lastViewedAt')
  assert.deepEqual(rows.slice(1).map((r) => r.split(',').slice(0, 4)), [
    [ANA, 'Ana', '2', '2'], [BEN, '', '2', '2'], [DAN, '', '3', '2'], [CAT, '', '2', '1'], [EVE, '', '3', '1']
  ], `${when}: csv`)
  t.diagnostic(`${when}: every figure as worked out by hand`)
}

async function count (app: TestApp, table: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(dbOf(app.app).db)
  return Number(rows[0].n)
}

test('insights through real Baileys: figures worked out by hand, live and after expiry; nothing raw left; none at retention 0', { timeout: 170_000 }, async (t) => {
  assert.ok(mediaTrusted(), 'run with NODE_EXTRA_CA_CERTS=test/.certs/cert.pem (the image goes to the emulator over HTTPS)')
  const platformEnv = (s: Stack) => ({ WA_WEBSOCKET_URL: s.emu.wsUrl, WA_TEST_TRUST_ROOT: s.emu.rootPublicKey })
  const s = await startStack(t, { STATUS_TTL_HOURS: '72', RATE_LIMIT_MAX: '1000000' })
  for (const number of [ANA, BEN, CAT, DAN, EVE]) s.emu.addContact({ number })
  await s.link(SID, OWN)
  await s.emu.setSavedContacts(OWN, [{ number: ANA, name: 'Ana' }])
  await waitFor(async () => (await dbOf(s.app).db.selectFrom('phone_contacts').select('name').where('number', '=', ANA).executeTakeFirst())?.name === 'Ana',
    20_000, 'the phone\'s contacts synced')

  const post = async (body: Record<string, unknown>): Promise<{ statusId: string, platformMessageId: string }> => {
    const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: body })
    assert.equal(res.statusCode, 200, res.body)
    const sent = res.json<{ data: { statusId: string, platformMessageId: string } }>().data
    await s.emu.waitForStatus((r) => r.id === sent.platformMessageId && r.decrypted, 15_000)
    return sent
  }
  const upload = form({ field: 'image', filename: 'sunset.jpg', type: 'image/jpeg', data: jpeg() })
  const up = await s.api({ method: 'POST', url: '/api/upload-image', payload: upload.payload, headers: upload.headers })
  assert.equal(up.statusCode, 200, up.body)
  const image = up.json<{ filename: string }>().filename
  const team = await s.api({ method: 'POST', url: `/api/sessions/${SID}/audiences`, payload: { name: 'Team', numbers: [ANA, DAN, EVE] } })
  assert.equal(team.statusCode, 200, team.body)
  const aud = team.json<{ data: { id: string } }>().data.id

  const s4 = await post({ type: 'text', content: S4_TEXT, targetNumbers: `${DAN},${EVE}` })
  const s1 = await post({ type: 'text', content: S1_TEXT, targetNumbers: `${ANA},${BEN},${CAT}` })
  const s2 = await post({ type: 'image', content: image, caption: CAPTION, audience: { type: 'list', numbers: [BEN, CAT, DAN] } })
  const s3 = await post({ type: 'text', content: S3_TEXT, audience: { type: 'saved', audienceId: aud } })
  const ids = { s1: s1.statusId, s2: s2.statusId, s3: s3.statusId, s4: s4.statusId }
  // the posts' times as the scenario has them
  for (const [key, ms] of Object.entries(POSTED) as Array<[keyof typeof POSTED, number]>) {
    await dbOf(s.app).db.updateTable('statuses').set({ created_at: B + ms }).where('id', '=', Number(ids[key])).execute()
  }

  // receipts with the viewers' own times (unix seconds)
  const tOf = (ms: number): number => (B + ms) / 1000
  await s.emu.sendGroupedReceipts(s4.platformMessageId, { viewers: [{ viewer: EVE, type: 'delivery', t: tOf(2 * HOUR + 30 * MIN) }] })
  await s.emu.sendGroupedReceipts(s1.platformMessageId, {
    viewers: [
      { viewer: CAT, type: 'delivery', t: tOf(8 * HOUR + 5 * MIN) },
      { viewer: ANA, type: 'read', t: tOf(8 * HOUR + 15 * MIN) },
      { viewer: BEN, type: 'read', t: tOf(9 * HOUR + 40 * MIN) }
    ]
  })
  await s.emu.sendGroupedReceipts(s2.platformMessageId, {
    viewers: [
      { viewer: BEN, type: 'read', t: tOf(10 * HOUR + 30 * MIN) },
      { viewer: DAN, type: 'read', t: tOf(10 * HOUR + 45 * MIN) },
      { viewer: CAT, type: 'played', t: tOf(12 * HOUR) },
      { viewer: EVE, type: 'read', participantPn: true, t: tOf(13 * HOUR) }
    ],
    force: true
  })
  await s.emu.sendGroupedReceipts(s3.platformMessageId, {
    viewers: [
      { viewer: EVE, type: 'delivery', t: tOf(21 * HOUR + 10 * MIN) },
      { viewer: ANA, type: 'read', t: tOf(23 * HOUR + 30 * MIN) },
      { viewer: DAN, type: 'read', t: tOf(24 * HOUR + 20 * MIN) }
    ]
  })
  await s.emu.react(s1.platformMessageId, { from: ANA, emoji: '👍' })
  await s.emu.reply(s1.platformMessageId, { from: BEN, text: 'good morning' })
  await s.emu.react(s2.platformMessageId, { from: CAT, emoji: '❤️' })
  await s.emu.react(s2.platformMessageId, { from: DAN, emoji: '😂' })
  await s.emu.react(s2.platformMessageId, { from: DAN, emoji: '' })
  await s.emu.reply(s2.platformMessageId, { from: CAT, text: 'wow' })
  await s.emu.reply(s2.platformMessageId, { from: CAT, text: 'where is this?' })
  await s.emu.reply(s3.platformMessageId, { from: ANA, text: 'see you' })
  const stored = async () => ({
    views: await count(s, 'viewers'),
    deliveries: await count(s, 'status_deliveries'),
    reactions: (await dbOf(s.app).db.selectFrom('status_reactions').select('emoji').where('emoji', '<>', '').execute()).length,
    taken: (await dbOf(s.app).db.selectFrom('status_reactions').select('emoji').where('emoji', '=', '').execute()).length,
    replies: await count(s, 'status_replies')
  })
  const all = { views: 8, deliveries: 3, reactions: 2, taken: 1, replies: 4 }
  await waitFor(async () => JSON.stringify(await stored()) === JSON.stringify(all), 20_000, 'every receipt, reaction and reply stored')
    .catch(async (err: Error) => { assert.deepEqual(await stored(), all, err.message) })
  await s.emu.settled()

  const live = expected(ids, aud, true)
  await checkFigures(t, s, live, 'live')

  // expiry: the same data folder again with a one-hour STATUS_TTL_HOURS (the cleanup at start takes all four)
  await s.app.close()
  const later = await build(t, { ...platformEnv(s), STATUS_TTL_HOURS: '1', RATE_LIMIT_MAX: '1000000' }, { keepDir: s.dir })
  await waitFor(async () => await count(later, 'statuses') === 0, 15_000, 'the four statuses to expire')
  const again = await later.app.statuses.cleanup()
  assert.deepEqual([again.statuses, again.uploads], [0, 0], 'nothing left to expire')
  for (const table of ['statuses', 'viewers', 'status_deliveries', 'status_reactions', 'status_replies', 'status_recipients', 'uploads']) {
    assert.equal(await count(later, table), 0, `no ${table} row left`)
  }
  assert.ok(!existsSync(join(later.config.uploadDir, image)), 'the image is gone')
  assert.equal(await count(later, 'insight_statuses'), 4)
  assert.equal(await count(later, 'insight_recipients'), 12)
  await checkFigures(t, later, expected(ids, aud, false), 'expired')

  // INSIGHTS_RETENTION_DAYS=0: the summaries go too, with a statuses-updated insights-cleanup
  await later.app.close()
  const none = await build(t, { ...platformEnv(s), STATUS_TTL_HOURS: '1', INSIGHTS_RETENTION_DAYS: '0', CLEANUP_INTERVAL_MS: '200' }, { keepDir: s.dir })
  await waitFor(async () => await count(none, 'insight_statuses') === 0, 15_000, 'the summaries to go')
  assert.equal(await count(none, 'insight_recipients'), 0)
  const logged = await dbOf(none.app).db.selectFrom('event_log').select('data').where('type', '=', 'statuses-updated').where('session_id', '=', SID).execute()
  assert.ok(logged.some((e) => /"action":"insights-cleanup"/.test(e.data)), 'statuses-updated insights-cleanup in the event log')
  const empty = await get<Insights>(none, `/api/sessions/${SID}/insights?from=${encodeURIComponent(FROM)}`)
  assert.deepEqual(rounded(empty.totals), {
    statuses: 0, recipients: 0, delivered: 0, viewed: 0, reacted: 0, replied: 0, viewRate: null, timeToView: { p50Ms: null, p90Ms: null }
  })
  assert.deepEqual(empty.statuses, [])
  assert.deepEqual(empty.viewsByHour, spread(24, {}))
  const nobody = await get<{ items: ContactLine[] }>(none, `/api/sessions/${SID}/insights/contacts?from=${encodeURIComponent(FROM)}`)
  assert.deepEqual(nobody.items, [])
})

test('INSIGHTS_RETENTION_DAYS=0: an expiring status leaves no summary at all', { timeout: 60_000 }, async (t) => {
  const s = await startStack(t, { STATUS_TTL_HOURS: '0.001', CLEANUP_INTERVAL_MS: '400', INSIGHTS_RETENTION_DAYS: '0' })
  s.emu.addContact({ number: ANA })
  await s.link(SID, OWN)
  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content: 'gone for good', targetNumbers: ANA } })
  assert.equal(res.statusCode, 200, res.body)
  const { platformMessageId } = res.json<{ data: { platformMessageId: string } }>().data
  await s.emu.waitForStatus((r) => r.id === platformMessageId && r.decrypted, 10_000)
  await s.emu.sendView(platformMessageId, { viewer: ANA })
  await waitFor(async () => await count(s, 'viewers') === 1, 3000, 'the view to be stored')
  await s.events.next('statuses-updated', (p) => p.action === 'cleanup' && p.sessionId === SID, 15_000)
  await waitFor(async () => await count(s, 'statuses') === 0, 5000, 'the status to expire')
  assert.equal(await count(s, 'viewers'), 0)
  assert.equal(await count(s, 'insight_statuses'), 0, 'no summary left')
  assert.equal(await count(s, 'insight_recipients'), 0)
  // none was ever written (rather than written and then removed by the retention cleanup): the table's
  // AUTOINCREMENT counter never moved, and no insights-cleanup was emitted
  const seq = await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'insight_statuses'`.execute(dbOf(s.app).db)
  assert.equal(Number(seq.rows[0]?.seq ?? 0), 0, 'no summary row was ever inserted')
  assert.equal(s.events.all('statuses-updated', (p) => p.sessionId === SID && p.action === 'insights-cleanup').length, 0)
  const got = await get<Insights>(s, `/api/sessions/${SID}/insights`)
  assert.equal(got.totals.statuses, 0)
})
