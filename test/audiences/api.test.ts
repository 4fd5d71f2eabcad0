import assert from 'node:assert/strict'
import { build, type TestApp } from '../helper.js'
import { dialectEnv, dialectTest } from '../support/db-matrix.js'
import { insertSession } from '../support/sessions.js'
import { dbOf } from '../support/db.js'

// Saved audiences (issue 24) over the REST API on both backends, without the platform: create, list in
// pages, read, replace, change, delete, and what is refused (400 naming each bad entry, 404). Also the
// send-status `audience` checks that come before any platform work, and a schedule naming an audience.

const SID = 'aud'
const OTHER = 'aud2'

interface Summary { id: string, name: string, count: number, createdAt: string, updatedAt: string }
interface Failure { success: false, error: string }

async function addSession (s: TestApp, id: string): Promise<void> {
  await insertSession(s.app, id)
}

/** n distinct valid numbers from `base` */
const numbersFrom = (base: number, n: number): string[] => Array.from({ length: n }, (_, i) => String(base + i))

async function create (s: TestApp, body: Record<string, unknown>, sessionId = SID): Promise<Summary> {
  const res = await s.api({ method: 'POST', url: `/api/sessions/${sessionId}/audiences`, payload: body })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: Summary }>().data
}

async function fails (s: TestApp, method: 'POST' | 'PUT' | 'PATCH' | 'GET' | 'DELETE', url: string, payload: unknown, code: number, error: RegExp): Promise<void> {
  const res = await s.api({ method, url, ...(payload !== undefined ? { payload: payload as object } : {}) })
  assert.equal(res.statusCode, code, `${method} ${url}: ${res.body}`)
  const body = res.json<Failure>()
  assert.equal(body.success, false)
  assert.match(body.error, error)
}

dialectTest('saved audiences: create, page through, read, replace, change, delete', async (t, dialect) => {
  const s = await build(t, await dialectEnv(dialect))
  await addSession(s, SID)
  await addSession(s, OTHER)
  const url = `/api/sessions/${SID}/audiences`

  // trimmed, blanks ignored, repeats dropped (the first kept), order kept
  const a = await create(s, { name: '  Customers  ', numbers: [' 4915100000003', '4915100000001', '', '4915100000003', '4915100000002 '] })
  assert.match(a.id, /^aud_[A-Za-z0-9_-]+$/)
  assert.equal(a.name, 'Customers')
  assert.equal(a.count, 3)
  const one = await s.api({ method: 'GET', url: `${url}/${a.id}` })
  assert.equal(one.statusCode, 200, one.body)
  assert.deepEqual(one.json<{ data: unknown }>().data, { ...a, numbers: ['4915100000003', '4915100000001', '4915100000002'] })

  // pages: oldest first, without numbers, the cursor of the last one
  const b = await create(s, { name: 'B', numbers: ['4915100000011'] })
  const c = await create(s, { name: 'C', numbers: ['4915100000021', '4915100000022'] })
  await create(s, { name: 'elsewhere', numbers: ['4915100000031'] }, OTHER)
  const first = await s.api({ method: 'GET', url: `${url}?limit=2` })
  assert.equal(first.statusCode, 200, first.body)
  const page1 = first.json<{ data: { audiences: Array<Record<string, unknown>>, nextCursor: string | null } }>().data
  assert.deepEqual(page1.audiences.map((x) => x.id), [a.id, b.id])
  assert.ok(page1.audiences.every((x) => !('numbers' in x)), 'lists leave the numbers out')
  assert.deepEqual(page1.audiences[0], a)
  assert.notEqual(page1.nextCursor, null)
  const second = await s.api({ method: 'GET', url: `${url}?limit=2&cursor=${page1.nextCursor ?? ''}` })
  const page2 = second.json<{ data: { audiences: Summary[], nextCursor: string | null } }>().data
  assert.deepEqual(page2.audiences.map((x) => x.id), [c.id])
  assert.equal(page2.nextCursor, null)
  const all = (await s.api({ method: 'GET', url })).json<{ data: { audiences: Summary[] } }>().data
  assert.deepEqual(all.audiences.map((x) => x.name), ['Customers', 'B', 'C'], "another session's audience is not listed")

  // PUT replaces both, PATCH only what it names
  const put = await s.api({ method: 'PUT', url: `${url}/${b.id}`, payload: { name: 'B2', numbers: ['4915100000012', '4915100000013'] } })
  assert.equal(put.statusCode, 200, put.body)
  assert.deepEqual([put.json<{ data: Summary }>().data.name, put.json<{ data: Summary }>().data.count], ['B2', 2])
  const renamed = await s.api({ method: 'PATCH', url: `${url}/${b.id}`, payload: { name: 'B3' } })
  assert.equal(renamed.json<{ data: Summary }>().data.count, 2, 'a new name keeps the numbers')
  const renumbered = await s.api({ method: 'PATCH', url: `${url}/${b.id}`, payload: { numbers: ['4915100000019'] } })
  assert.deepEqual([renumbered.json<{ data: Summary }>().data.name, renumbered.json<{ data: Summary }>().data.count], ['B3', 1])
  const read = (await s.api({ method: 'GET', url: `${url}/${b.id}` })).json<{ data: { numbers: string[], createdAt: string, updatedAt: string } }>().data
  assert.deepEqual(read.numbers, ['4915100000019'])
  assert.ok(Date.parse(read.updatedAt) >= Date.parse(read.createdAt))
  assert.equal(renumbered.json<{ data: Summary }>().data.updatedAt, read.updatedAt, 'the answer is the audience as stored')

  // another session's audience is not found through this session; delete once
  const theirs = (await s.api({ method: 'GET', url: `/api/sessions/${OTHER}/audiences` })).json<{ data: { audiences: Summary[] } }>().data.audiences[0]
  await fails(s, 'GET', `${url}/${theirs.id}`, undefined, 404, /^Audience not found$/)
  await fails(s, 'DELETE', `${url}/${theirs.id}`, undefined, 404, /^Audience not found$/)
  const del = await s.api({ method: 'DELETE', url: `${url}/${c.id}` })
  assert.equal(del.statusCode, 200, del.body)
  assert.deepEqual(del.json<{ data: unknown }>().data, { id: c.id, message: 'Audience deleted' })
  await fails(s, 'GET', `${url}/${c.id}`, undefined, 404, /^Audience not found$/)
  await fails(s, 'DELETE', `${url}/${c.id}`, undefined, 404, /^Audience not found$/)
  await fails(s, 'PATCH', `${url}/${c.id}`, { name: 'x' }, 404, /^Audience not found$/)
  await fails(s, 'GET', '/api/sessions/nobody/audiences', undefined, 404, /^Session not found$/)

  // the session's audiences go with it
  await dbOf(s.app).db.deleteFrom('sessions').where('id', '=', OTHER).execute()
  assert.equal((await dbOf(s.app).db.selectFrom('audiences').select('id').where('session_id', '=', OTHER).execute()).length, 0)
})

dialectTest('saved audiences: 50,000 numbers kept whole; bad input answers 400 naming the field and each bad entry', async (t, dialect) => {
  const s = await build(t, await dialectEnv(dialect))
  await addSession(s, SID)
  const url = `/api/sessions/${SID}/audiences`

  const big = numbersFrom(491510000000, 50_000)
  const saved = await create(s, { name: 'everyone', numbers: big })
  assert.equal(saved.count, 50_000)
  const back = (await s.api({ method: 'GET', url: `${url}/${saved.id}` })).json<{ data: { numbers: string[] } }>().data.numbers
  assert.deepEqual(back, big)

  await fails(s, 'POST', url, { name: 'too many', numbers: [...big, '491520000000'] }, 400, /body\.numbers must NOT have more than 50000 items/)
  await fails(s, 'POST', url, { name: 'bad', numbers: ['4915100000001', '12', '+4915100000002', 'abc'] }, 400,
    /^body\.numbers has 3 invalid entries \(each must be 10 to 15 digits[^)]*\): body\.numbers\[1\] "12", body\.numbers\[2\] "\+4915100000002", body\.numbers\[3\] "abc"$/)
  const many = Array.from({ length: 25 }, (_, i) => `x${i}`)
  await fails(s, 'POST', url, { name: 'worse', numbers: many }, 400, /has 25 invalid entries .*body\.numbers\[19\] "x19" and 5 more$/)
  await fails(s, 'POST', url, { name: '   ', numbers: ['4915100000001'] }, 400, /^body\.name must not be blank$/)
  await fails(s, 'POST', url, { name: 'empty', numbers: [] }, 400, /body\.numbers must NOT have fewer than 1 items/)
  await fails(s, 'POST', url, { name: 'blank', numbers: ['  '] }, 400, /^body\.numbers must hold at least one number$/)
  await fails(s, 'POST', url, { name: 'n', numbers: ['4915100000001'], colour: 'red' }, 400, /^body\.colour is not an allowed field$/)
  await fails(s, 'POST', url, { numbers: ['4915100000001'] }, 400, /^body\.name is required$/)
  await fails(s, 'POST', url, { name: 'x', numbers: '4915100000001' }, 400, /body\.numbers must be array/)
  await fails(s, 'PUT', `${url}/${saved.id}`, { name: 'x' }, 400, /^body\.numbers is required$/)
  await fails(s, 'PATCH', `${url}/${saved.id}`, {}, 400, /fewer than 1 properties/)
  await fails(s, 'PATCH', `${url}/${saved.id}`, { numbers: ['1'] }, 400, /body\.numbers\[0\] "1"/)
  await fails(s, 'GET', `${url}/not-an-id`, undefined, 400, /params\.audienceId/)
  await fails(s, 'GET', `${url}?limit=0`, undefined, 400, /querystring\.limit/)
  // nothing half-written: still the one audience, unchanged
  const list = (await s.api({ method: 'GET', url })).json<{ data: { audiences: Summary[] } }>().data.audiences
  assert.deepEqual(list.map((x) => [x.name, x.count]), [['everyone', 50_000]])
})

dialectTest('send-status `audience` and schedules: the checks that come before the platform', async (t, dialect) => {
  const s = await build(t, await dialectEnv(dialect))
  await addSession(s, SID)
  const saved = await create(s, { name: 'VIP', numbers: ['4915100000001'] })
  const send = `/api/sessions/${SID}/send-status`
  const text = { type: 'text', content: 'hello' }
  const cases: Array<[string, unknown, number, RegExp]> = [
    ['both fields', { ...text, targetNumbers: '4915100000001', audience: { type: 'list', numbers: ['4915100000001'] } }, 400, /^body\.targetNumbers cannot be given with body\.audience/],
    ['an empty targetNumbers too', { ...text, targetNumbers: '', audience: { type: 'phone' } }, 400, /^body\.targetNumbers cannot be given with body\.audience/],
    ['unknown type', { ...text, audience: { type: 'friends' } }, 400, /^body\.audience\.type must be one of: list, contacts, phone, saved$/],
    ['list without numbers', { ...text, audience: { type: 'list' } }, 400, /^body\.audience\.numbers is required for type 'list'$/],
    ['list of blanks', { ...text, audience: { type: 'list', numbers: [' '] } }, 400, /^body\.audience\.numbers must hold at least one number$/],
    ['bad list entry', { ...text, audience: { type: 'list', numbers: ['4915100000001', '0'] } }, 400, /^body\.audience\.numbers has 1 invalid entry .*: body\.audience\.numbers\[1\] "0"$/],
    ['field of another type', { ...text, audience: { type: 'contacts', numbers: ['4915100000001'] } }, 400, /^body\.audience\.numbers does not go with type 'contacts'$/],
    ['bad except entry', { ...text, audience: { type: 'contacts', except: ['nope'] } }, 400, /^body\.audience\.except has 1 invalid entry \(each must be .*, or a LID \(<lid>@lid\)\): body\.audience\.except\[0\] "nope"$/],
    ['saved without id', { ...text, audience: { type: 'saved' } }, 400, /^body\.audience\.audienceId is required for type 'saved'$/],
    ['saved with a bad id', { ...text, audience: { type: 'saved', audienceId: 'x' } }, 400, /^body\.audience\.audienceId must be a saved audience id/],
    ['unknown saved audience', { ...text, audience: { type: 'saved', audienceId: 'aud_missing' } }, 400, /^body\.audience\.audienceId: no saved audience aud_missing in this session$/],
    ['unknown field', { ...text, audience: { type: 'phone', mode: 'x' } }, 400, /^body\.audience\.mode is not an allowed field$/],
    // the phone has sent nothing for a session never linked: a clear 409, nothing posted
    ['contacts not known', { ...text, audience: { type: 'contacts' } }, 409, /^body\.audience: no saved contacts of the phone are known for this session yet/],
    ['privacy not known', { ...text, audience: { type: 'phone' } }, 409, /^body\.audience: the phone's status privacy is not known for this session yet/]
  ]
  // on PostgreSQL (cluster mode) a send goes to the node holding the session first: none holds this one
  if (dialect === 'sqlite') {
    for (const [what, payload, code, error] of cases) {
      const res = await s.api({ method: 'POST', url: send, payload: payload as object })
      assert.equal(res.statusCode, code, `${what}: ${res.body}`)
      assert.match(res.json<Failure>().error, error, what)
    }
    // a known saved audience gets past the checks: the session is not connected
    await fails(s, 'POST', send, { ...text, audience: { type: 'saved', audienceId: saved.id } }, 500, /^WhatsApp is not connected$/)
    assert.equal((await dbOf(s.app).db.selectFrom('statuses').select('id').execute()).length, 0, 'no status recorded')
  }

  const sched = `/api/sessions/${SID}/scheduled-statuses`
  const at = new Date(Date.now() + 3_600_000).toISOString()
  await fails(s, 'POST', sched, { status: { ...text, audience: { type: 'saved', audienceId: 'aud_missing' } }, at }, 400, /^body\.status\.audience\.audienceId: no saved audience aud_missing/)
  await fails(s, 'POST', sched, { status: { ...text, audience: { type: 'list', numbers: ['12'] } }, at }, 400, /^body\.status\.audience\.numbers has 1 invalid entry/)
  await fails(s, 'POST', sched, { status: { ...text, targetNumbers: '4915100000001', audience: { type: 'phone' } }, at }, 400, /^body\.status\.targetNumbers cannot be given with body\.status\.audience/)
  // contacts and privacy are read at each run, so they need not be known yet
  for (const audience of [{ type: 'saved', audienceId: saved.id }, { type: 'contacts', except: ['4915100000001'] }, { type: 'phone' }]) {
    const ok = await s.api({ method: 'POST', url: sched, payload: { status: { ...text, audience }, at } })
    assert.equal(ok.statusCode, 200, ok.body)
    const id = ok.json<{ data: { id: string } }>().data.id
    const got = (await s.api({ method: 'GET', url: `${sched}/${id}` })).json<{ data: { status: { audience: unknown } } }>().data
    assert.deepEqual(got.status.audience, audience, 'the schedule keeps the audience as given')
  }
})
