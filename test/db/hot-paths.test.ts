import assert from 'node:assert/strict'
import { storesOf } from '../../src/db/stores/index.js'
import type { DbHandle } from '../../src/db/connection.js'
import type { InCommit, ViewerRecord, ViewToRecord } from '../../src/db/stores/viewers.js'
import { dialectTest, openTestDb } from '../support/db-matrix.js'

// The hot paths (prepared statements on SQLite, their twins on PostgreSQL) and the Kysely queries, through
// the stores, the same assertions on both dialects.

/** a commit that appends no event */
const quiet: InCommit<unknown> = { needs: () => ({}), events: () => [] }

async function seed (handle: DbHandle, sessionId = 's1', messageId = 'M1', createdAt = 1000): Promise<number> {
  await storesOf(handle).sessions.insert({ id: sessionId, name: sessionId, authMethod: 'qrcode', phoneNumber: null, createdAt })
  return await storesOf(handle).statuses.insert({
    sessionId: sessionId, type: 'text', content: 'x', caption: '', messageId: messageId, state: 'sending', createdAt: createdAt,
    contactCount: 2, targetNumbers: '1555,1556', mediaFile: null, backgroundColor: null, font: null, error: null
  })
}

const view = (number: string | null, viewedAt: number, extra: Partial<ViewToRecord> = {}): ViewToRecord => ({
  sessionId: 's1', messageId: 'M1', number, jid: number === null ? '77@lid' : `${number}@s.whatsapp.net`, viewedAt, isReal: true, ...extra
})

dialectTest('session store: list, get, marked linked and unlinked, insert once', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const sessions = storesOf(handle).sessions
  await seed(handle, 'b', 'M1', 2)
  await seed(handle, 'a', 'M2', 2)
  assert.deepEqual((await sessions.stored()).map((s) => s.id), ['a', 'b'])
  assert.deepEqual(await sessions.storedOne('a'), { id: 'a', authMethod: 'qrcode', phoneNumber: null })
  assert.equal(await sessions.storedOne('zz'), undefined)
  await sessions.markLinked('a', '1555', '99@lid')
  assert.deepEqual((await storesOf(handle).system.sessionLinkStates()).sort((x, y) => x.id.localeCompare(y.id)), [{ id: 'a', linked: true }, { id: 'b', linked: false }])
  // the list (on SQLite its own prepared statement, kept-statements) gives each session as find does
  assert.deepEqual(await sessions.list(), [await sessions.find('a'), await sessions.find('b')])
  assert.deepEqual((await sessions.list())[0], { id: 'a', name: 'a', authMethod: 'qrcode', phoneNumber: null, ownNumber: '1555', ownLid: '99@lid', linked: true, createdAt: 2 })
  assert.equal((await sessions.find('a'))?.ownLid, '99@lid')
  await sessions.markUnlinked('a')
  assert.equal((await sessions.find('a'))?.linked, false)
  assert.equal(await sessions.insert({ id: 'a', name: 'x', authMethod: 'qrcode', phoneNumber: null, createdAt: 1 }), false)
  // one session's link writes commit in the order they were made, each with its events
  const events = [{ type: 'connection-status', sessionId: 'a', at: 5, data: '{}' }]
  await Promise.all([sessions.markLinked('a', '1555', null, events), sessions.markUnlinked('a', events)])
  assert.equal((await sessions.find('a'))?.linked, false)
  const logged = await handle.db.selectFrom('event_log').select('session_id').where('type', '=', 'connection-status').execute()
  assert.equal(logged.length, 2)
  await sessions.setPhoneNumber('a', '1999')
  assert.equal((await sessions.find('a'))?.phoneNumber, '1999')
  assert.deepEqual((await sessions.list()).map((s) => s.id), ['a', 'b'])
  await sessions.remove('a')
  assert.equal(await sessions.find('a'), undefined)
})

dialectTest('viewer store: earliest view wins, unknown statuses skipped, LID views get their number', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const statusId = await seed(handle)
  const writer = storesOf(handle).viewers
  const record = async (views: ViewToRecord[]) => await writer.commitReceipts({ views, deliveries: [] }, quiet)
  const changed = await record([view('1555', 50), view('1555', 40), view('1556', 60), view('1557', 1, { messageId: 'nope' })])
  assert.deepEqual([...changed].map(([id, c]) => [id, c.sessionId, c.added.map((v) => v.number)]), [[statusId, 's1', ['1555', '1556']]])
  assert.deepEqual((await record([view('1555', 70)])).size, 0, 'a later view changes nothing')
  const earlier = await record([view('1556', 10)])
  assert.deepEqual([...earlier].map(([id, c]) => [id, c.added.length]), [[statusId, 0]], 'an earlier one moves the time, adds nobody')
  await record([view(null, 30), view('1558', 5, { isReal: false })])
  assert.deepEqual(await writer.unmappedLids('s1', 10), ['77@lid'])
  let rows = await writer.list(statusId)
  assert.deepEqual(rows.map((r) => [r.viewer, r.number, r.viewedAt, r.isReal]), [
    ['1558', '1558', 5, 0], ['1556', '1556', 10, 1], ['77@lid', null, 30, 1], ['1555', '1555', 40, 1]])

  // the LID turns out to be 1555, which has a later view already: merged, the earlier time wins
  const mapped = await writer.mapLids('s1', [{ lid: '77@lid', number: '1555' }], quiet)
  assert.deepEqual([...mapped], [statusId])
  rows = await writer.list(statusId)
  assert.deepEqual(rows.map((r) => [r.viewer, r.viewedAt]), [['1558', 5], ['1556', 10], ['1555', 30]])
  assert.deepEqual(await writer.unmappedLids('s1', 10), [])
  // what a commit's events read in its transaction: real viewers counted, the list in view order
  let read: unknown
  await writer.commitReceipts({ views: [view('1559', 1)], deliveries: [] }, { needs: () => ({ counts: [statusId], lists: [statusId] }), events: (_c, r) => { read = [r.counts.get(statusId), r.lists.get(statusId)?.map((v) => v.viewer)]; return [] } })
  assert.deepEqual(read, [3, ['1559', '1558', '1556', '1555']])
  const [sent] = await storesOf(handle).statuses.listSent('s1', 0)
  assert.equal(sent.viewerCount, 4 - 1, 'real viewers only, as a number')
  assert.deepEqual(await storesOf(handle).system.statusTotals(), { statuses: 1, lastCreatedAt: 1000, realViewers: 3 })
  // the list a commit reads (on SQLite sorted in JS) is in the store's list order (SQL's order by): many
  // views at the same times, keys of digits of several lengths and LIDs mixed
  const many = Array.from({ length: 60 }, (_, i) => i % 7 === 0
    ? view(null, 100 + (i * 13) % 9, { jid: `${900 + i * 11}@lid` })
    : view(String(15 + (i * 37) % 1000), 100 + (i * 13) % 9, { isReal: i % 5 !== 0 }))
  await record(many)
  let lists: ViewerRecord[] | undefined
  await writer.commitReceipts({ views: [view('16', 1)], deliveries: [] }, { needs: () => ({ lists: [statusId] }), events: (_c, r) => { lists = r.lists.get(statusId); return [] } })
  const shape = (rows: ViewerRecord[] | undefined) => (rows ?? []).map((r) => [r.viewer, r.number, r.jid, Number(r.viewedAt), Number(r.isReal)])
  const listed = await writer.list(statusId)
  assert.ok(listed.length > 50)
  assert.deepEqual(shape(lists), shape(listed))
})

dialectTest('send progress: payload, may-have-it rows, confirmed chunks, and a gone status', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const id = await seed(handle)
  const progress = storesOf(handle).statuses
  assert.equal(await progress.savePayload(id, new Uint8Array([9, 8, 7])), true)
  assert.equal(await progress.unconfirmed(id, ['a@s', 'b@s', 'c@s']), true)
  assert.equal(await progress.commitChunk(id, ['a@s', 'a@s', 'own@s'], 1), true)
  await progress.notSent(id, ['c@s', 'a@s'])
  assert.deepEqual((await progress.recipients(id, 'confirmed')).sort(), ['a@s', 'own@s'])
  assert.deepEqual((await progress.recipients(id, 'all')).sort(), ['a@s', 'b@s', 'own@s'])
  const row = await handle.db.selectFrom('statuses').select(['sent_count', 'message_payload']).where('id', '=', id).executeTakeFirstOrThrow()
  assert.equal(row.sent_count, 1)
  assert.deepEqual([...(row.message_payload ?? [])], [9, 8, 7])
  const expired = await progress.deleteBefore(2000)
  assert.deepEqual(expired, [{ id, sessionId: 's1', mediaFile: null }])
  assert.equal(await progress.commitChunk(id, ['x@s'], 2), false)
  assert.equal(await progress.unconfirmed(id, ['x@s']), false)
  assert.equal(await progress.savePayload(id, new Uint8Array([1])), false)
})

dialectTest('upload commit: the row only with its file in place; a failed rename leaves no row', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const uploads = storesOf(handle).uploads
  const commit = uploads.commit
  const row = { filename: 'f1.jpg', kind: 'image' as const, mimeType: 'image/jpeg', size: 10, createdAt: 5 }
  let placed = 0
  await commit(row, () => { placed++ }, () => { placed-- })
  assert.equal(placed, 1)
  await assert.rejects(async () => { await commit({ ...row, filename: 'f2.jpg' }, () => { throw new Error('rename failed') }, () => {}) }, /rename failed/)
  // the same name twice: the insert fails before the rename runs
  await assert.rejects(async () => { await commit(row, () => { placed++ }, () => {}) })
  assert.equal(placed, 1)
  assert.deepEqual(await storesOf(handle).system.uploadTotals(), { count: 1, bytes: 10 })
  await seed(handle)
  await handle.db.updateTable('statuses').set({ media_file: 'f1.jpg' }).execute()
  const [storage] = await storesOf(handle).system.storageBySession()
  assert.deepEqual(storage, { sessionId: 's1', statuses: 1, viewers: 0, authStateRows: 0, mediaFiles: 1, mediaBytes: 10 })
})
