import assert from 'node:assert/strict'
import { test } from 'node:test'
// the driver the service picks for this Node (better-sqlite3 12 aborts Node 24.19+ when it is collected)
import { SQLite } from '../../src/db/sqlite/driver.js'
import { Kysely, Migrator, SqliteDialect } from 'kysely'
import { migrationProvider } from '../../src/db/migrations/index.js'
import { PlatformError } from '../../src/platform/errors.js'
import { sqliteOf, waitFor } from '../helper.js'
import { harness, OWN, type Harness } from './harness.js'
import { dbOf } from '../support/db.js'

// A send's recorded life (issue 11) over the real database with the fake platform: chunks committed one
// by one, partial and failed sends, the interrupted-send answer, and resuming rows a crash left `sending`.

const R = Array.from({ length: 5 }, (_, i) => `1555123000${i}`)
const jid = (n: string): string => `${n}@s.whatsapp.net`
const lost = (): PlatformError => new PlatformError('NOT_CONNECTED', 'WhatsApp is not connected (session logged-out)')

async function recipientsOf (h: Harness, statusId: string | number): Promise<string[]> {
  const rows = await dbOf(h.app).db.selectFrom('status_recipients').select('jid').where('status_id', '=', Number(statusId)).execute()
  return rows.map((r) => r.jid).sort()
}

async function rowOf (h: Harness, statusId: string | number) {
  return await dbOf(h.app).db.selectFrom('statuses').selectAll().where('id', '=', Number(statusId)).executeTakeFirst()
}

test('each chunk is committed before the next goes out; the built message is stored first', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  // what is committed when each chunk is about to go out (the fake platform sends own + 5 in chunks of 2)
  const seen: Array<{ state: string, sent: number, recipients: number, payload: boolean }> = []
  h.platform.beforeChunk = () => {
    const row = sqliteOf(dbOf(h.app)).prepare('select state, sent_count as sent, message_payload is not null as payload, ' +
      '(select count(*) from status_recipients r where r.status_id = statuses.id) as recipients from statuses order by id desc limit 1')
      .get() as { state: string, sent: number, recipients: number, payload: number }
    seen.push({ ...row, payload: row.payload === 1 })
  }
  const res = await h.app.statuses.send('s1', { type: 'text', content: 'x', targetNumbers: R.join(',') })
  assert.deepEqual([res.state, res.sentCount, res.contactCount], ['sent', 5, 5])
  assert.deepEqual(seen, [
    { state: 'sending', sent: 0, recipients: 0, payload: true },
    { state: 'sending', sent: 1, recipients: 2, payload: true },
    { state: 'sending', sent: 3, recipients: 4, payload: true }
  ])
  const row = await rowOf(h, res.statusId)
  assert.deepEqual([row?.state, row?.sent_count], ['sent', 5])
  assert.deepEqual(await recipientsOf(h, res.statusId), [OWN, ...R].map(jid).sort())
})

test('interrupted part-way: 200 with state partial and the counts, listed, counted, revocable for exactly those recipients', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  h.platform.failAfter = { chunks: 2, error: lost() }
  const res = await h.app.statuses.send('s1', { type: 'text', content: 'x', targetNumbers: R.join(',') })
  assert.equal(res.state, 'partial')
  assert.equal(res.sentCount, 3)
  assert.equal(res.contactCount, 5)
  assert.match(res.message, /^Status sent to 3 of 5 contacts; sending stopped: WhatsApp is not connected \(session logged-out\)$/)
  const have = [OWN, R[0], R[1], R[2]].map(jid).sort()
  assert.deepEqual(await recipientsOf(h, res.statusId), have)

  const [ev] = h.of('statuses-updated')
  assert.deepEqual({ ...ev, message: undefined }, { sessionId: 's1', statusId: res.statusId, action: 'partial', message: undefined })
  assert.equal(h.of('status-sent').length, 0)

  const listed = await h.app.statuses.list('s1')
  assert.equal(listed.length, 1)
  assert.deepEqual([listed[0].state, listed[0].sentCount, listed[0].contactCount], ['partial', 3, 5])
  assert.match(listed[0].error ?? '', /stopped after 3 of 5/)

  const deleted = await h.app.statuses.remove('s1', res.statusId, { revoke: true })
  assert.equal(deleted.deletedFromPlatform, true)
  assert.deepEqual(h.platform.revoked.map((r) => [r.messageId, [...r.recipientJids].sort()]), [[res.platformMessageId, have]])
})

test('a chunk written but cut off before its ack: not counted, but kept so a revoke includes it, and said so', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  h.platform.failAfter = { chunks: 1, error: lost(), written: true }
  const res = await h.app.statuses.send('s1', { type: 'text', content: 'x', targetNumbers: R.join(',') })
  assert.deepEqual([res.state, res.sentCount], ['partial', 1])
  assert.match(res.message, /\(2 more may have it: the link closed before the platform confirmed them; a revoke includes them\)$/)
  const rows = await dbOf(h.app).db.selectFrom('status_recipients').select(['jid', 'confirmed']).where('status_id', '=', Number(res.statusId)).orderBy('jid').execute()
  assert.deepEqual(rows.map((r) => [r.jid, r.confirmed]), [[jid(OWN), 1], [jid(R[0]), 1], [jid(R[1]), 0], [jid(R[2]), 0]].sort())
  await h.app.statuses.remove('s1', res.statusId, { revoke: true })
  assert.deepEqual([...h.platform.revoked[0].recipientJids].sort(), [OWN, R[0], R[1], R[2]].map(jid).sort())

  // only unacknowledged chunks: nobody is known to have it, but somebody may: kept as partial with 0
  h.platform.failAfter = { chunks: 0, error: lost(), written: true }
  const none = await h.app.statuses.send('s1', { type: 'text', content: 'y', targetNumbers: R[0] })
  assert.deepEqual([none.state, none.sentCount], ['partial', 0])
})

test('stopped before anyone had it: the HTTP error as before, no row, a send-failed event', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  h.platform.failAfter = { chunks: 0, error: lost() }
  await assert.rejects(h.app.statuses.send('s1', { type: 'text', content: 'x', targetNumbers: R.join(',') }),
    (err: Error & { statusCode?: number }) => err.statusCode === 500 && err.message === 'WhatsApp is not connected')
  h.platform.failAfter = { chunks: 0, error: new Error('All encryptions failed') }
  await assert.rejects(h.app.statuses.send('s1', { type: 'text', content: 'y' }), { statusCode: 500, message: 'Failed to send status: All encryptions failed' })
  assert.deepEqual(await h.app.statuses.list('s1'), [])
  assert.equal(Number((await dbOf(h.app).db.selectFrom('status_recipients').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n), 0)
  assert.deepEqual(h.of('statuses-updated').map((e) => e.action), ['send-failed', 'send-failed'])
})

test('a status still being sent is listed as sending and cannot be deleted (409)', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  let open!: () => void
  h.platform.gate = new Promise((resolve) => { open = resolve })
  const pending = h.app.statuses.send('s1', { type: 'text', content: 'x', targetNumbers: R[0] })
  const [listed] = await waitFor(async () => { const l = await h.app.statuses.list('s1'); return l.length > 0 ? l : null }, 2000, 'the row')
  assert.deepEqual([listed.state, listed.sentCount], ['sending', 0])
  await assert.rejects(h.app.statuses.remove('s1', listed.id), (err: Error & { statusCode?: number }) => err.statusCode === 409 && /still being sent/.test(err.message))
  open()
  assert.equal((await pending).state, 'sent')
  assert.equal((await h.app.statuses.remove('s1', listed.id)).deletedFromDatabase, true)
})

/** A row as a crash leaves it: `sending`, its message stored (or not), some chunks committed. */
async function interrupted (h: Harness, opts: { sessionId?: string, payload?: boolean, committed: string[], inFlight?: string[] }): Promise<number> {
  const { db } = dbOf(h.app)
  const { id } = await db.insertInto('statuses').values({
    session_id: opts.sessionId ?? 's1', type: 'text', content: 'left behind', caption: '', message_id: `M${Math.random().toString(16).slice(2, 10)}`, state: 'sending',
    created_at: Date.now(), contact_count: R.length, target_numbers: [...R, OWN].join(','), sent_count: opts.committed.filter((j) => j !== jid(OWN)).length,
    message_payload: opts.payload === false ? null : Buffer.from('stored message'), media_file: null, background_color: null, font: null, error: null
  }).returning('id').executeTakeFirstOrThrow()
  if (opts.committed.length > 0) await db.insertInto('status_recipients').values(opts.committed.map((j) => ({ status_id: id, jid: j }))).execute()
  for (const j of opts.inFlight ?? []) await db.insertInto('status_recipients').values({ status_id: id, jid: j, confirmed: 0 }).execute()
  return id
}

test('at start, a send a crash left sending resumes once its session is open: same id and message, remaining recipients only', async (t) => {
  const h = await harness(t)
  await h.addSession('s1', { connected: false })
  // R[1]'s chunk was in flight at the crash: it goes out again
  const id = await interrupted(h, { committed: [jid(OWN), jid(R[0])], inFlight: [jid(R[1])] })
  const row = await rowOf(h, id)
  assert.equal(await h.app.statuses.recover(), 1)
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.equal(h.platform.sent.length, 0, 'waits for the session')
  h.platform.connected.set('s1', OWN)
  h.platform.emit('connection-status', { sessionId: 's1', connected: true, status: 'open', ownNumber: OWN })
  const sent = await waitFor(() => h.of('status-sent')[0], 2000, 'status-sent')
  assert.equal(sent.statusId, String(id))
  const [call] = h.platform.sent
  assert.equal(call.input.messageId, row?.message_id)
  assert.deepEqual(Buffer.from(call.input.prepared ?? []).toString(), 'stored message')
  assert.deepEqual([...(call.input.done ?? [])].sort(), [jid(OWN), jid(R[0])].sort())
  assert.deepEqual(call.input.recipients, R)
  const after = await rowOf(h, id)
  assert.deepEqual([after?.state, after?.sent_count], ['sent', 5])
  assert.deepEqual(await recipientsOf(h, id), [OWN, ...R].map(jid).sort())
})

test('at start, interrupted sends that cannot resume end partial (or are removed when nobody has them)', async (t) => {
  // a bound far above what the logged-out path takes even on a loaded machine, so the two are told apart
  const h = await harness(t, { SEND_RECONNECT_WAIT_MS: '2000' })
  await h.addSession('s1', { connected: false })
  await h.addSession('s2', { connected: false })
  h.platform.loggedOut.add('s2')
  const timedOut = await interrupted(h, { committed: [jid(OWN), jid(R[0]), jid(R[1])] })
  const loggedOut = await interrupted(h, { sessionId: 's2', committed: [jid(OWN)] })
  const unbuilt = await interrupted(h, { payload: false, committed: [] })
  const started = Date.now()
  assert.equal(await h.app.statuses.recover(), 3)
  await waitFor(async () => (await rowOf(h, loggedOut))?.state === 'partial', 2000, 'the logged-out row to end')
  assert.ok(Date.now() - started < 1500, 'a logged-out session is not waited for')
  await waitFor(async () => (await rowOf(h, timedOut))?.state === 'partial', 6000, 'the bound')
  assert.ok(Date.now() - started >= 1990)
  assert.equal(await rowOf(h, unbuilt), undefined)
  assert.equal(h.platform.sent.length, 0)
  const rows = await h.app.statuses.list('s1')
  assert.deepEqual(rows.map((r) => [r.id, r.state, r.sentCount]), [[String(timedOut), 'partial', 2]])
  assert.match(rows[0].error ?? '', /^Sending stopped after 2 of 5: the session did not reconnect within 2 s$/)
  assert.deepEqual((await h.app.statuses.list('s2')).map((r) => [r.state, r.sentCount]), [['partial', 0]])
  assert.deepEqual(h.of('statuses-updated').map((e) => [e.statusId, e.action]).sort(), [[String(loggedOut), 'partial'], [String(timedOut), 'partial'], [String(unbuilt), 'send-failed']].sort())
})

test('migration 003: recipients move to status_recipients, sent rows count them, rows left sending by the old code become partial', async () => {
  const sqlite = new SQLite(':memory:')
  sqlite.pragma('foreign_keys = ON')
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: sqlite }) }) // eslint-disable-line @typescript-eslint/no-explicit-any
  const migrator = new Migrator({ db, provider: migrationProvider })
  assert.equal((await migrator.migrateTo('001-initial')).error, undefined)
  await db.insertInto('sessions').values({ id: 's1', name: 's1', auth_method: 'qrcode', created_at: 1 }).execute()
  const base = { session_id: 's1', type: 'text', content: 'x', caption: '', created_at: Date.now(), target_numbers: '' }
  await db.insertInto('statuses').values([
    { ...base, message_id: 'A', state: 'sent', contact_count: 2, recipients: JSON.stringify([jid(OWN), jid(R[0]), jid(R[1])]) },
    { ...base, message_id: 'B', state: 'sending', contact_count: 2, recipients: '[]' }
  ]).execute()
  const { error } = await migrator.migrateToLatest()
  assert.equal(error, undefined)
  const rows = await db.selectFrom('statuses').select(['message_id', 'state', 'sent_count', 'error']).orderBy('id').execute()
  assert.deepEqual(rows.map((r) => [r.message_id, r.state, r.sent_count]), [['A', 'sent', 2], ['B', 'partial', 0]])
  assert.match(rows[1].error, /recipients were recorded/)
  const recipients = await db.selectFrom('status_recipients').select('jid').orderBy('jid').execute()
  assert.deepEqual(recipients.map((r) => r.jid), [jid(OWN), jid(R[0]), jid(R[1])].sort())
  const columns = sqlite.prepare('select name from pragma_table_info(\'statuses\')').pluck().all()
  assert.ok(!columns.includes('recipients'))
  await db.destroy()
})
