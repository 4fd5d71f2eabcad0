import assert from 'node:assert/strict'
import { storesOf } from '../../src/db/stores/index.js'
import { dialectTest, openTestDb } from '../support/db-matrix.js'
import { DAY, RANGE, T0, writeFixture } from './fixture.js'

// The insights store on both dialects: the figures of live statuses (their rows summarised on the fly) equal
// those after expiry (their summaries), counted by hand (test/insights/fixture.ts); filters, paging,
// per-contact figures and their sorts, forget and prune.

const EXPECTED_TOTALS = { statuses: 2, recipients: 6, delivered: 3, viewed: 2, reacted: 1, replied: 2 }

dialectTest('insights: the same figures live and after expiry, as counted by hand', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const store = storesOf(handle).insights
  const { s1, s2 } = await writeFixture(handle.db)
  const filter = { sessionId: 's1', ...RANGE }

  const read = async () => ({
    overview: await store.overview(filter, { limit: 50 }),
    contacts: await store.contacts(filter, { sort: 'number', order: 'asc', offset: 0 })
  })
  const live = await read()
  const o = live.overview
  assert.deepEqual(o.totals, EXPECTED_TOTALS)
  assert.deepEqual(o.timeToView, { p50Ms: 60_000, p90Ms: 120_000 })
  assert.deepEqual(o.byType, [{ type: 'image', statuses: 1, recipients: 2, delivered: 0, viewed: 0, reacted: 0, replied: 0 },
    { type: 'text', statuses: 1, recipients: 4, delivered: 3, viewed: 2, reacted: 1, replied: 2 }])
  assert.deepEqual(o.byAudience.map((a) => [a.kind, a.audienceId, a.name, a.statuses, a.recipients]), [['numbers', null, null, 1, 4], ['saved', 'aud_vip', 'VIP', 1, 2]])
  assert.deepEqual(o.views, [{ bucket: (T0 + 60_000) / 900_000 | 0, views: 2 }])
  assert.deepEqual(o.posted.map((p) => [p.bucket, p.statuses]).sort(), [[T0 / 900_000, 1], [(T0 + DAY) / 900_000, 1]])
  const figures = (s: typeof o.statuses[number]) => [
    s.statusId, s.live, s.type, s.captionLength, s.audienceKind, s.recipients, s.delivered, s.viewed, s.reacted, s.replied, s.firstViewMs, s.medianViewMs
  ]
  assert.deepEqual(o.statuses.map(figures), [
    [s2, true, 'image', 5, 'saved', 2, 0, 0, 0, 0, null, null],
    [s1, true, 'text', 5, 'numbers', 4, 3, 2, 1, 2, 60_000, 60_000]
  ])
  assert.deepEqual(live.contacts.map((c) => [c.recipient, c.name, c.received, c.delivered, c.viewed, c.reactions, c.replies, c.lastViewedAt, c.medianViewMs]), [
    ['1111', 'Ann', 2, 1, 1, 1, 0, T0 + 60_000, 60_000],
    ['2222', null, 2, 1, 0, 0, 0, null, null],
    ['3333', null, 1, 1, 1, 0, 2, T0 + 120_000, 120_000],
    ['5555', null, 1, 0, 0, 0, 1, null, null]
  ])

  // expiry: summaries written and rows deleted in one transaction
  await storesOf(handle).transaction(async (tx) => {
    assert.equal(await tx.insights.keepExpired(T0 + 3 * DAY, 0), 2)
    assert.equal((await tx.statuses.deleteBefore(T0 + 3 * DAY)).length, 2)
  })
  const after = await read()
  assert.deepEqual(after.overview.statuses.map((s) => s.live), [false, false])
  assert.deepEqual({ ...after.overview, statuses: after.overview.statuses.map((s) => ({ ...s, live: true })) }, live.overview, 'nothing jumps at expiry')
  assert.deepEqual(after.contacts, live.contacts)
  assert.equal(await store.keepExpired(T0 + 3 * DAY, 0), 0, 'nothing left to summarise')
})

dialectTest('insights: a status read live while its summary is committed counts once, by its summary', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const store = storesOf(handle).insights
  await writeFixture(handle.db)
  const filter = { sessionId: 's1', ...RANGE }
  const live = await store.overview(filter, { limit: 50 })
  // a summary written and the status row not yet gone: what a read sees when a cleanup commits between its steps
  assert.equal(await store.keepExpired(T0 + 3 * DAY, 0), 2)
  const both = await store.overview(filter, { limit: 50 })
  assert.deepEqual(both.statuses.map((s) => s.live), [false, false])
  assert.deepEqual([both.totals, both.timeToView, both.views, both.posted], [live.totals, live.timeToView, live.views, live.posted])
  assert.deepEqual(await store.contacts(filter, { sort: 'number', order: 'asc', offset: 0 }), await (async () => {
    await storesOf(handle).statuses.deleteBefore(T0 + 3 * DAY)
    return await store.contacts(filter, { sort: 'number', order: 'asc', offset: 0 })
  })())
})

dialectTest('insights: filters, paging, contact sorts, forget and prune', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const store = storesOf(handle).insights
  const { s1, s2 } = await writeFixture(handle.db)
  await store.keepExpired(T0 + 1, 0)
  await storesOf(handle).statuses.deleteBefore(T0 + 1)
  const filter = { sessionId: 's1', ...RANGE }
  // s1 summarised, s2 live
  const both = await store.overview(filter, { limit: 1 })
  assert.deepEqual(both.statuses.map((s) => [s.statusId, s.live]), [[s2, true], [s1, false]], 'limit + 1 rows: one more follows')
  assert.deepEqual((await store.overview(filter, { limit: 1, beforeId: s2 })).statuses.map((s) => s.statusId), [s1])
  assert.deepEqual(both.totals, EXPECTED_TOTALS)
  assert.equal((await store.overview({ ...filter, type: 'text' }, { limit: 5 })).totals.statuses, 1)
  assert.equal((await store.overview({ ...filter, type: 'video' }, { limit: 5 })).totals.statuses, 0)
  const saved = await store.overview({ ...filter, audienceId: 'aud_vip' }, { limit: 5 })
  assert.deepEqual([saved.totals.statuses, saved.totals.recipients, saved.views.length], [1, 2, 0])
  const numbers = await store.overview({ ...filter, audienceKind: 'numbers' }, { limit: 5 })
  assert.deepEqual([numbers.totals.viewed, numbers.views.length, numbers.timeToView.p50Ms], [2, 1, 60_000])
  assert.equal((await store.overview({ ...filter, from: T0 + 1000 }, { limit: 5 })).totals.statuses, 1, 'range by posting time')
  const none = await store.overview({ ...filter, sessionId: 'other' }, { limit: 5 })
  const zero = { statuses: 0, recipients: 0, delivered: 0, viewed: 0, reacted: 0, replied: 0 }
  assert.deepEqual([none.totals, none.timeToView], [zero, { p50Ms: null, p90Ms: null }])

  const order = async (sort: Parameters<typeof store.contacts>[1]['sort'], o: 'asc' | 'desc') =>
    (await store.contacts(filter, { sort, order: o, offset: 0 })).map((c) => c.recipient)
  assert.deepEqual(await order('viewed', 'desc'), ['1111', '3333', '2222', '5555'])
  assert.deepEqual(await order('viewed', 'asc'), ['2222', '5555', '1111', '3333'])
  assert.deepEqual(await order('viewRate', 'desc'), ['1111', '3333', '2222', '5555'], 'null rate last')
  assert.deepEqual(await order('medianViewMs', 'asc'), ['1111', '3333', '2222', '5555'])
  assert.deepEqual(await order('replies', 'desc'), ['3333', '5555', '1111', '2222'])
  assert.deepEqual(await order('lastViewedAt', 'desc'), ['3333', '1111', '2222', '5555'])
  assert.deepEqual(await order('received', 'desc'), ['1111', '2222', '3333', '5555'])
  assert.deepEqual(await order('number', 'desc'), ['5555', '3333', '2222', '1111'])
  assert.deepEqual((await store.contacts(filter, { sort: 'number', order: 'asc', limit: 2, offset: 1 })).map((c) => c.recipient), ['2222', '3333'])

  assert.equal(await store.forget('s1', s1), true)
  assert.equal(await store.forget('s1', s1), false)
  assert.equal((await store.overview(filter, { limit: 5 })).totals.statuses, 1)
  assert.equal(await store.keep('s1', s2), true)
  assert.equal(await store.keep('s1', s2), false, 'a summary is written once')
  assert.deepEqual([...await store.prune(T0 + DAY + 1)], [['s1', 1]])
  assert.equal((await handle.db.selectFrom('insight_recipients').select('recipient').execute()).length, 0, 'lines go with their summary')
})

dialectTest('insights: p50 and p90 by nearest rank over many views, live, mixed and expired alike', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const store = storesOf(handle).insights
  const { db } = handle
  await db.insertInto('sessions').values({ id: 'p', name: 'p', auth_method: 'qrcode', phone_number: null, own_number: null, own_lid: null, created_at: T0 }).execute()
  let seed = 7
  const rnd = () => { seed = (seed * 16807) % 2147483647; return seed / 2147483647 }
  const delays: number[] = []
  for (let i = 0; i < 3; i++) {
    const posted = T0 + i * 3_600_000
    const numbers = Array.from({ length: 300 }, (_, k) => String(2_000_000 + k))
    const { id } = await db.insertInto('statuses').values({
      session_id: 'p', type: 'text', content: 't', caption: '', message_id: `P${i}`, state: 'sent', created_at: posted, contact_count: 300,
      target_numbers: numbers.join(','), media_file: null, background_color: null, font: null, error: null
    }).returning('id').executeTakeFirstOrThrow()
    const views = numbers.filter(() => rnd() < 0.7).map((n, k) => {
      // some exactly on a quarter hour's edge, one before posting (counted as 0)
      const delay = k % 17 === 0 ? 900_000 * (k % 5) : k === 1 ? -5000 : Math.floor(rnd() * rnd() * 30 * 3_600_000)
      delays.push(Math.max(0, delay))
      return { status_id: id, viewer: n, number: n, jid: `${n}@s.whatsapp.net`, viewed_at: posted + delay, is_real: 1 }
    })
    await db.insertInto('viewers').values(views).execute()
  }
  delays.sort((a, b) => a - b)
  const rank = (p: number) => delays[Math.ceil(p * delays.length) - 1]
  const expected = { p50Ms: rank(0.5), p90Ms: rank(0.9) }
  const filter = { sessionId: 'p', from: T0, to: T0 + DAY }
  assert.deepEqual((await store.overview(filter, { limit: 1 })).timeToView, expected, 'live')
  await store.keepExpired(T0 + 1, 0)
  await storesOf(handle).statuses.deleteBefore(T0 + 1)
  assert.deepEqual((await store.overview(filter, { limit: 1 })).timeToView, expected, 'one expired, two live')
  await store.keepExpired(T0 + DAY, 0)
  await storesOf(handle).statuses.deleteBefore(T0 + DAY)
  const expired = await store.overview(filter, { limit: 1 })
  assert.deepEqual(expired.timeToView, expected, 'all expired')
  assert.equal(expired.views.reduce((a, b) => a + b.views, 0), delays.length, 'every view in a quarter hour')
})
