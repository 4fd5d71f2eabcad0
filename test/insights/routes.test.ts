import assert from 'node:assert/strict'
import { build } from '../helper.js'
import { dbOf } from '../support/db.js'
import { dialectEnv, dialectTest } from '../support/db-matrix.js'
import { DAY, recentMonday, writeFixture } from './fixture.js'

// The two insights routes through the app on both dialects: the figures of test/insights/fixture.ts in the
// caller's time zone, before and after expiry (the cleanup), the query's 400s, CSV, delete-status keeping
// (and forgetting) a summary, INSIGHTS_RETENTION_DAYS=0 and the session's deletion.

const iso = (ms: number) => new Date(ms).toISOString()

dialectTest('GET insights: figures by hand in UTC and in other zones, the same after expiry', async (t, dialect) => {
  const s = await build(t, await dialectEnv(dialect))
  const T0 = recentMonday()
  const { s1, s2 } = await writeFixture(dbOf(s.app).db, 's1', T0)
  const url = `/api/sessions/s1/insights?from=${iso(T0 - DAY)}&to=${iso(T0 + 2 * DAY)}`
  const get = async (query = '') => {
    const res = await s.api({ method: 'GET', url: url + query })
    assert.equal(res.statusCode, 200, res.body)
    return res.json().data
  }
  const live = await get()
  const timeToView = { p50Ms: 60_000, p90Ms: 120_000 }
  assert.deepEqual(live.totals, { statuses: 2, recipients: 6, delivered: 3, viewed: 2, reacted: 1, replied: 2, viewRate: 2 / 3, timeToView })
  assert.equal(live.tz, 'UTC')
  assert.equal(live.viewsByHour[10], 2)
  assert.equal(live.viewsByHour.reduce((a: number, b: number) => a + b, 0), 2)
  assert.deepEqual(live.viewsByWeekday, [2, 0, 0, 0, 0, 0, 0])
  assert.deepEqual(live.daily.map((d: { date: string, statuses: number, viewed: number }) => [d.date, d.statuses, d.viewed]), [
    [iso(T0 - DAY).slice(0, 10), 0, 0], [iso(T0).slice(0, 10), 1, 2], [iso(T0 + DAY).slice(0, 10), 1, 0], [iso(T0 + 2 * DAY).slice(0, 10), 0, 0]
  ])
  assert.deepEqual(live.byType.map((b: { type: string, viewRate: number | null }) => [b.type, b.viewRate]), [['image', null], ['text', 2 / 3]])
  assert.deepEqual(live.byAudience.map((b: { kind: string, audienceId: string | null, name: string | null }) => [b.kind, b.audienceId, b.name]),
    [['numbers', null, null], ['saved', 'aud_vip', 'VIP']])
  assert.deepEqual(live.statuses.map((x: { statusId: string, live: boolean }) => [x.statusId, x.live]), [[String(s2), true], [String(s1), true]])
  assert.deepEqual(live.statuses[1], {
    statusId: String(s1), live: true, type: 'text', captionLength: 5, audience: { kind: 'numbers', audienceId: null, name: null, size: 3 }, postedAt: iso(T0),
    recipients: 4, delivered: 3, viewed: 2, reacted: 1, replied: 2, viewRate: 2 / 3, firstViewMs: 60_000, medianViewMs: 60_000
  })
  assert.equal(live.nextCursor, null)

  // New York is 5 hours behind in January (4 in summer): Monday 10:01 UTC is 05:01 or 06:01 there; Kathmandu is 5:45 ahead
  const ny = await get('&tz=America/New_York')
  const nyHour = new Date(T0).toLocaleString('en-US', { timeZone: 'America/New_York', hour: 'numeric', hourCycle: 'h23' })
  assert.equal(ny.viewsByHour[Number(nyHour)], 2)
  assert.deepEqual(ny.viewsByWeekday, [2, 0, 0, 0, 0, 0, 0])
  const ktm = await get('&tz=Asia/Kathmandu')
  assert.equal(ktm.viewsByHour[15], 2, '10:01 UTC is 15:46 in Kathmandu')
  const samoa = await get('&tz=Pacific/Kiritimati')
  assert.deepEqual(samoa.viewsByWeekday, [0, 2, 0, 0, 0, 0, 0], '+14:00: already Tuesday')
  assert.equal(samoa.daily.find((d: { statuses: number }) => d.statuses > 0).date, iso(T0 + DAY).slice(0, 10))

  const page = await get('&limit=1')
  assert.deepEqual([page.statuses.length, page.nextCursor], [1, String(s2)])
  const next = await get(`&limit=1&cursor=${page.nextCursor as string}`)
  assert.deepEqual([next.statuses[0].statusId, next.nextCursor], [String(s1), null])
  assert.equal((await get('&type=image')).totals.statuses, 1)
  assert.equal((await get('&audience=aud_vip')).totals.recipients, 2)
  assert.equal((await get('&audience=numbers')).totals.recipients, 4)

  // expiry: the same figures, from the summaries
  assert.equal((await s.app.statuses.cleanup()).statuses, 2)
  const rows = await dbOf(s.app).db.selectFrom('statuses').select('id').execute()
  assert.deepEqual(rows, [])
  const expired = await get()
  assert.deepEqual(expired.statuses.map((x: { live: boolean }) => x.live), [false, false])
  for (const x of expired.statuses) x.live = true
  assert.deepEqual(expired, live)
  const expiredKtm = await get('&tz=Asia/Kathmandu')
  assert.deepEqual([expiredKtm.viewsByHour, expiredKtm.daily], [ktm.viewsByHour, ktm.daily])
})

dialectTest('GET insights: 400 naming the field, 404 for an unknown session', async (t, dialect) => {
  const s = await build(t, await dialectEnv(dialect))
  await writeFixture(dbOf(s.app).db, 's1', recentMonday())
  const error = async (url: string, code: number) => {
    const res = await s.api({ method: 'GET', url })
    assert.equal(res.statusCode, code, res.body)
    assert.equal(res.json().success, false)
    return res.json().error as string
  }
  assert.match(await error('/api/sessions/s1/insights?tz=Mars/Olympus', 400), /querystring\.tz/)
  assert.match(await error('/api/sessions/s1/insights?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 400), /querystring\.from/)
  assert.match(await error('/api/sessions/s1/insights?from=yesterday', 400), /querystring\.from/)
  assert.match(await error('/api/sessions/s1/insights?type=gif', 400), /querystring\.type/)
  assert.match(await error('/api/sessions/s1/insights?audience=friends', 400), /querystring\.audience/)
  assert.match(await error('/api/sessions/s1/insights?limit=501', 400), /querystring\.limit/)
  assert.match(await error('/api/sessions/s1/insights/contacts?sort=name', 400), /querystring\.sort/)
  assert.match(await error('/api/sessions/s1/insights/contacts?limit=1001', 400), /querystring\.limit/)
  assert.match(await error('/api/sessions/nobody/insights', 404), /Session not found/)
  assert.match(await error('/api/sessions/nobody/insights/contacts', 404), /Session not found/)
})

dialectTest('GET insights/contacts: pages, sorts and CSV', async (t, dialect) => {
  const s = await build(t, await dialectEnv(dialect))
  const T0 = recentMonday()
  await writeFixture(dbOf(s.app).db, 's1', T0)
  const url = `/api/sessions/s1/insights/contacts?from=${iso(T0 - DAY)}&to=${iso(T0 + 2 * DAY)}`
  const first = (await s.api({ method: 'GET', url: `${url}&limit=2` })).json().data
  assert.deepEqual(first.items, [
    { number: '1111', name: 'Ann', received: 2, viewed: 1, viewRate: 1, medianViewMs: 60_000, reactions: 1, replies: 0, lastViewedAt: iso(T0 + 60_000) },
    { number: '3333', name: null, received: 1, viewed: 1, viewRate: 1, medianViewMs: 120_000, reactions: 0, replies: 2, lastViewedAt: iso(T0 + 120_000) }
  ])
  assert.equal(first.nextCursor, '2')
  const second = (await s.api({ method: 'GET', url: `${url}&limit=2&cursor=2` })).json().data
  assert.deepEqual([second.items.map((c: { number: string }) => c.number), second.nextCursor], [['2222', '5555'], null])
  const never = (await s.api({ method: 'GET', url: `${url}&sort=viewed&order=asc&limit=2` })).json().data
  assert.deepEqual(never.items.map((c: { number: string, viewed: number }) => [c.number, c.viewed]), [['2222', 0], ['5555', 0]])

  const csv = await s.api({ method: 'GET', url: `${url}&format=csv&limit=1` })
  assert.equal(csv.statusCode, 200)
  assert.match(String(csv.headers['content-type']), /^text\/csv/)
  assert.equal(csv.body, [
    'number,name,received,viewed,viewRate,medianViewMs,reactions,replies,lastViewedAt',
    `1111,Ann,2,1,1,60000,1,0,${iso(T0 + 60_000)}`,
    `3333,,1,1,1,120000,0,2,${iso(T0 + 120_000)}`,
    '2222,,2,0,0,,0,0,',
    '5555,,1,0,,,0,1,',
    ''
  ].join('\r\n'))
  const accepted = await s.api({ method: 'GET', url, headers: { accept: 'text/csv' } })
  assert.equal(accepted.body, csv.body)
})

dialectTest('delete-status keeps a summary (forget=true keeps none); retention 0 keeps nothing; deleting the session removes them', async (t, dialect) => {
  const s = await build(t, await dialectEnv(dialect))
  const T0 = recentMonday()
  const { s1, s2 } = await writeFixture(dbOf(s.app).db, 's1', T0)
  const url = `/api/sessions/s1/insights?from=${iso(T0 - DAY)}&to=${iso(T0 + 2 * DAY)}`
  const before = (await s.api({ method: 'GET', url })).json().data
  assert.equal((await s.api({ method: 'DELETE', url: `/api/sessions/s1/delete-status/${s1}` })).statusCode, 200)
  const kept = (await s.api({ method: 'GET', url })).json().data
  assert.deepEqual(kept.statuses.map((x: { statusId: string, live: boolean }) => [x.statusId, x.live]), [[String(s2), true], [String(s1), false]])
  assert.deepEqual(kept.totals, before.totals)
  assert.equal((await s.api({ method: 'DELETE', url: `/api/sessions/s1/delete-status/${s2}?forget=true` })).statusCode, 200)
  const forgotten = (await s.api({ method: 'GET', url })).json().data
  assert.deepEqual(forgotten.statuses.map((x: { statusId: string }) => x.statusId), [String(s1)])

  // what the delete-session route does (its cluster placement aside)
  await s.app.stores.sessions.remove('s1')
  assert.deepEqual(await dbOf(s.app).db.selectFrom('insight_statuses').select('id').execute(), [])
  assert.deepEqual(await dbOf(s.app).db.selectFrom('insight_recipients').select('recipient').execute(), [])
})

dialectTest('INSIGHTS_RETENTION_DAYS: 0 keeps no summary at expiry; older summaries are pruned with an insights-cleanup event', async (t, dialect) => {
  const s = await build(t, { ...await dialectEnv(dialect), INSIGHTS_RETENTION_DAYS: '0' })
  const T0 = recentMonday()
  await writeFixture(dbOf(s.app).db, 's1', T0)
  assert.equal((await s.app.statuses.cleanup()).statuses, 2)
  assert.deepEqual(await dbOf(s.app).db.selectFrom('insight_statuses').select('id').execute(), [])
  const url = `/api/sessions/s1/insights?from=${iso(T0 - DAY)}&to=${iso(T0 + 2 * DAY)}`
  assert.equal((await s.api({ method: 'GET', url })).json().data.totals.statuses, 0)

  const s30 = await build(t, { ...await dialectEnv(dialect), INSIGHTS_RETENTION_DAYS: '30' })
  const db = dbOf(s30.app).db
  const { s1 } = await writeFixture(db, 's30', recentMonday())
  await s30.app.statuses.cleanup()
  assert.equal((await db.selectFrom('insight_statuses').select('id').execute()).length, 2)
  await db.updateTable('insight_statuses').set({ posted_at: Date.now() - 31 * DAY }).where('status_id', '=', s1).execute()
  await s30.app.statuses.cleanup()
  assert.deepEqual((await db.selectFrom('insight_statuses').select('status_id').execute()).map((r) => Number(r.status_id)).includes(s1), false)
  assert.equal((await db.selectFrom('insight_recipients').select('recipient').execute()).length, 2, "the other status's two lines stay")
  const events = await db.selectFrom('event_log').select(['data', 'session_id']).where('type', '=', 'statuses-updated').execute()
  assert.deepEqual(events.map((e) => [e.session_id, JSON.parse(e.data).action, JSON.parse(e.data).message]), [
    ['s30', 'cleanup', '2 expired statuses removed'],
    ['s30', 'insights-cleanup', '1 insights summary past retention removed']
  ])
})
