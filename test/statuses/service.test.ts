import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { SQLite } from '../../src/db/sqlite/driver.js'
import { VIEWERS_UPDATE_MS } from '../../plugins/viewer-ingest/index.js'
import { windowMs } from '../../plugins/viewer-ingest/viewers-update.js'
import { SendFailed } from '../../src/errors.js'
import type { StatusView } from '../../src/platform/types.js'
import { waitFor } from '../helper.js'
import { harness, OWN } from './harness.js'
import { serveFiles } from '../stack.js'
import { mp4, png } from '../uploads/fixtures.js'
import { dbOf } from '../support/db.js'

const A = '15551230001'
const B = '15551230002'
const C = '447700900123'

const LID = '99999@lid'
const receipt = (messageId: string, viewerNumber: string | null, type: StatusView['type'] = 'read', at = Date.now()): StatusView =>
  ({ messageId, viewerJid: viewerNumber === null ? LID : `${viewerNumber}@s.whatsapp.net`, viewerNumber, isOwn: viewerNumber === OWN, type, at })

async function rejects (p: Promise<unknown>, status: number, message: RegExp): Promise<void> {
  await assert.rejects(p, (err: Error & { statusCode?: number }) => {
    assert.equal(err.statusCode, status, err.message)
    assert.match(err.message, message)
    return true
  })
}

test('text status: colour and font go to the platform, row stored as sent, status-sent carries both ids', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  const res = await h.app.statuses.send('s1', { type: 'text', content: 'hello', caption: 'ignored', backgroundColor: '#FF112233', font: 3, targetNumbers: `${A}, ${B},${A},${OWN}` })
  assert.equal(res.contactCount, 2)
  assert.deepEqual([res.state, res.sentCount], ['sent', 2])
  assert.match(res.statusId, /^[0-9]+$/)
  const [call] = h.platform.sent
  assert.deepEqual(call.input.content, { kind: 'text', text: 'hello', backgroundColor: '#FF112233', font: 3 })
  assert.deepEqual(call.input.recipients, [A, B], 'own number never sent twice, duplicates dropped')
  assert.equal(call.input.messageId, res.platformMessageId)

  const row = await dbOf(h.app).db.selectFrom('statuses').selectAll().executeTakeFirstOrThrow()
  assert.equal(row.state, 'sent')
  assert.equal(row.caption, '', 'caption ignored for text')
  assert.equal(row.target_numbers, `${A},${B},${OWN}`)
  assert.equal(row.sent_count, 2)
  const recipients = await dbOf(h.app).db.selectFrom('status_recipients').select('jid').where('status_id', '=', row.id).execute()
  assert.deepEqual(recipients.map((r) => r.jid).sort(), [OWN, A, B].map((n) => `${n}@s.whatsapp.net`).sort())
  assert.equal(row.background_color, '#FF112233')
  assert.equal(row.font, 3)

  const [sent] = h.of('status-sent')
  assert.equal(sent.statusId, res.statusId)
  assert.equal(sent.id, res.statusId)
  assert.equal(sent.platformMessageId, res.platformMessageId)
  assert.equal(sent.contactCount, 2)
  assert.equal(sent.caption, '')
  assert.ok(!Number.isNaN(Date.parse(sent.timestamp)))
  assert.deepEqual(h.of('status-send-progress').map((p) => [p.statusId, p.sent, p.total]), [[res.statusId, 2, 3], [res.statusId, 3, 3]])

  const [listed] = await h.app.statuses.list('s1')
  assert.deepEqual({ ...listed, timestamp: undefined }, {
    id: res.statusId, type: 'text', content: 'hello', caption: '', timestamp: undefined, platformMessageId: res.platformMessageId,
    contactCount: 2, targetNumbers: `${A},${B},${OWN}`, audience: null, viewerCount: 0, reactionCount: 0, replyCount: 0, error: null, state: 'sent', sentCount: 2, unreachable: [], mentions: []
  })
})

test('empty targetNumbers or only the own number: sent to the own number only, contactCount 1', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  for (const targetNumbers of [undefined, '', ` ${OWN} ,${OWN}`]) {
    const res = await h.app.statuses.send('s1', { type: 'text', content: 'x', targetNumbers })
    assert.equal(res.contactCount, 1)
    assert.deepEqual(h.platform.sent.at(-1)?.input.recipients, [])
  }
})

test('image/video: upload must exist and be of that kind; url: media by extension, otherwise text with the URL', async (t) => {
  // the URLs are served from loopback: allowed here only
  const h = await harness(t, { ALLOW_PRIVATE_URLS: 'true' })
  const web = await serveFiles(t, { '/p/Cat.WEBP': { type: 'image/png', body: png() }, '/v.mkv': { type: 'video/mp4', body: mp4() } })
  await h.addSession('s1')
  const img = await h.addUpload('photo.jpg', 'image')
  const vid = await h.addUpload('clip.mp4', 'video')
  await h.app.statuses.send('s1', { type: 'image', content: img, caption: 'cap' })
  assert.deepEqual(h.platform.sent.at(-1)?.input.content, { kind: 'image', source: { path: join(h.uploadDir, img) }, caption: 'cap', mimetype: 'image/jpeg' })
  await h.app.statuses.send('s1', { type: 'video', content: vid })
  assert.deepEqual(h.platform.sent.at(-1)?.input.content, { kind: 'video', source: { path: join(h.uploadDir, vid) }, caption: '', mimetype: 'video/mp4' })

  await rejects(h.app.statuses.send('s1', { type: 'image', content: vid }), 400, /uploaded video/)
  await rejects(h.app.statuses.send('s1', { type: 'image', content: '1700000000000-000000000000-missing.jpg' }), 400, /^Uploaded file not found$/)
  await rejects(h.app.statuses.send('s1', { type: 'video', content: `../uploads/${vid}` }), 400, /^Uploaded file not found$/)

  // url media: fetched by the server into a temporary file that Baileys reads, removed after the send;
  // the MIME type is what the bytes are (a PNG behind a .WEBP name)
  await h.app.statuses.send('s1', { type: 'url', content: web.url('/p/Cat.WEBP?v=2'), caption: 'meow' })
  const fetched = h.platform.sent.at(-1)?.input.content
  assert.ok(fetched?.kind === 'image' && 'path' in fetched.source, JSON.stringify(fetched))
  assert.match(fetched.source.path, /\/\.remote-[0-9a-f]{16}\.part$/)
  assert.deepEqual({ ...fetched, source: undefined }, { kind: 'image', source: undefined, mimetype: 'image/png', caption: 'meow' })
  assert.ok(!existsSync(fetched.source.path), 'the temporary copy is removed after the send')
  await h.app.statuses.send('s1', { type: 'url', content: web.url('/v.mkv') })
  assert.equal(h.platform.sent.at(-1)?.input.content?.kind, 'video')
  await h.app.statuses.send('s1', { type: 'url', content: 'https://news.example/story', caption: 'read this' })
  assert.deepEqual(h.platform.sent.at(-1)?.input.content, { kind: 'text', text: 'https://news.example/story\nread this' })
  await rejects(h.app.statuses.send('s1', { type: 'url', content: 'ftp://x/a.jpg' }), 400, /http\(s\) URL/)

  const rows = await dbOf(h.app).db.selectFrom('statuses').select(['type', 'content', 'media_file']).orderBy('id').execute()
  assert.deepEqual(rows.map((r) => [r.type, r.media_file]), [['image', img], ['video', vid], ['url', null], ['url', null], ['url', null]])
  assert.equal(rows[4].content, 'https://news.example/story', 'only the URL is stored')
  assert.equal(rows[2].content, web.url('/p/Cat.WEBP?v=2'))
})

test('errors: unknown session 404, not connected 500, bad numbers 400; a failed send leaves no row', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  await h.addSession('off', { connected: false })
  await rejects(h.app.statuses.send('nope', { type: 'text', content: 'x' }), 404, /^Session not found$/)
  await rejects(h.app.statuses.send('off', { type: 'text', content: 'x' }), 500, /^WhatsApp is not connected$/)
  await rejects(h.app.statuses.send('s1', { type: 'text', content: 'x', targetNumbers: `${A},12ab` }), 400, /"12ab"/)

  h.platform.failNext = new Error('All encryptions failed')
  await rejects(h.app.statuses.send('s1', { type: 'text', content: 'x' }), 500, /^Failed to send status: All encryptions failed$/)
  h.platform.failNext = new SendFailed('media upload timed out')
  await rejects(h.app.statuses.send('s1', { type: 'text', content: 'x' }), 500, /^Failed to send status: media upload timed out$/)
  // goes offline while sending
  let open!: () => void
  h.platform.gate = new Promise((resolve) => { open = resolve })
  const pending = h.app.statuses.send('s1', { type: 'text', content: 'x' })
  await waitFor(() => h.platform.sent.length === 3, 2000, 'third send')
  h.platform.connected.delete('s1')
  open()
  await rejects(pending, 500, /^WhatsApp is not connected$/)
  const count = await dbOf(h.app).db.selectFrom('statuses').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  assert.equal(Number(count.n), 0)
  assert.equal(h.of('status-sent').length, 0)
  await rejects(h.app.statuses.list('nope'), 404, /Session not found/)
  await rejects(h.app.statuses.viewers('s1', '12345'), 404, /^Status not found$/)
  await rejects(h.app.statuses.remove('s1', '12345'), 404, /^Status not found$/)
})

test('viewer ingest: read/played count, an unmapped LID is kept with number null, own number isReal false, first view kept', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  await h.addSession('s2', { own: '15550000002' })
  const { statusId, platformMessageId: mid } = await h.app.statuses.send('s1', { type: 'text', content: 'x', targetNumbers: `${A},${B},${C}` })
  const other = await h.app.statuses.send('s2', { type: 'text', content: 'y' })
  const t0 = Date.now() - 10_000
  await h.app.viewerIngest.commit('s1', [
    receipt(mid, A, 'read', t0 + 2000),
    receipt(mid, B, 'played', t0 + 3000),
    receipt(mid, null, 'read', t0 + 3500),
    receipt(mid, OWN, 'read', t0 + 4000),
    receipt(mid, A, 'played', t0 + 5000),
    receipt('UNKNOWNID', C, 'read', t0),
    receipt(other.platformMessageId, C, 'read', t0) // another session's status: not this one
  ])
  // an older read that arrives later still wins
  await h.app.viewerIngest.commit('s1', [receipt(mid, B, 'read', t0 + 1000)])
  // the first commit's update went with it; the second one, in the same window, comes at the window's end
  await waitFor(() => h.of('status-viewers-update').length >= 2, 2000, 'viewers updates')
  const viewers = await h.app.statuses.viewers('s1', statusId)
  assert.deepEqual(viewers, [
    { jid: `${B}@s.whatsapp.net`, number: B, viewedAt: new Date(t0 + 1000).toISOString(), isReal: true },
    { jid: `${A}@s.whatsapp.net`, number: A, viewedAt: new Date(t0 + 2000).toISOString(), isReal: true },
    { jid: LID, number: null, viewedAt: new Date(t0 + 3500).toISOString(), isReal: true },
    { jid: `${OWN}@s.whatsapp.net`, number: OWN, viewedAt: new Date(t0 + 4000).toISOString(), isReal: false }
  ])
  assert.deepEqual(await h.app.statuses.viewers('s2', other.statusId), [])
  await rejects(h.app.statuses.viewers('s2', statusId), 404, /Status not found/)
  const [listed] = await h.app.statuses.list('s1')
  assert.equal(listed.viewerCount, 3, 'own views are not counted; a LID without a number is')
  const last = h.of('status-viewers-update').at(-1)
  assert.equal(last?.statusId, statusId)
  assert.equal(last?.sessionId, 's1')
  assert.deepEqual(last?.viewers, viewers)
})

test('receipts that race the send are kept (the row exists before the first stanza)', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  let open!: () => void
  h.platform.gate = new Promise((resolve) => { open = resolve })
  const pending = h.app.statuses.send('s1', { type: 'text', content: 'x', targetNumbers: A })
  await waitFor(() => h.platform.sent.length === 1, 2000, 'send call')
  await h.app.viewerIngest.commit('s1', [receipt(h.platform.sent[0].input.messageId, A)])
  await new Promise((resolve) => setTimeout(resolve, 60))
  open()
  const res = await pending
  assert.equal((await h.app.statuses.viewers('s1', res.statusId)).length, 1)
})

test('viewer ingest commits each stanza at once and coalesces updates to one per status per window', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  const s = await h.app.statuses.send('s1', { type: 'text', content: 'x' })
  const mid = s.platformMessageId
  const total = 5000
  const started = performance.now()
  // one commit per stanza, as the platform calls it: each is in the database when commit resolves
  for (let i = 0; i < total; i++) {
    await h.app.viewerIngest.commit('s1', [receipt(mid, String(10_000_000_000 + i))])
  }
  const elapsed = performance.now() - started
  const stats = h.app.viewerIngest.stats()
  assert.equal(stats.recorded, total)
  assert.equal(stats.commits, total)
  t.diagnostic(`ingest: ${total} single-view commits in ${elapsed.toFixed(0)} ms (${Math.round(total / (elapsed / 1000))}/s)`)
  assert.equal((await h.app.statuses.viewers('s1', s.statusId)).length, total)
  await waitFor(() => h.of('status-viewers-update').some((u) => u.viewers.length === total), 5000, 'the update after the bulk')
  // a list of 5,000 has a window of its own length (windowMs: 200 ms per 1,000 viewers begun)
  assert.equal(windowMs(total), VIEWERS_UPDATE_MS * 5)
  assert.equal(windowMs(1), VIEWERS_UPDATE_MS)
  await new Promise((resolve) => setTimeout(resolve, windowMs(total) + 50))

  // a steady trickle for ~700 ms: leading event, then at most one per window, and the last holds everything
  const before = h.of('status-viewers-update').length
  const startTrickle = Date.now()
  let n = 0
  while (Date.now() - startTrickle < 700) {
    await h.app.viewerIngest.commit('s1', [receipt(mid, String(20_000_000_000 + n++))])
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  await new Promise((resolve) => setTimeout(resolve, windowMs(total + n) * 2 + 100))
  const updates = h.events.filter((e) => e.event === 'status-viewers-update').slice(before)
  // at most one per window (leading + trailing edge); a loaded machine may stall the trickle and give fewer,
  // never more. The recorder stamps an event when it reaches the listener, after its commit: one that reached it
  // a few ms late makes the next gap look short by as much (seen in CI-like runs: 195 ms for a 200 ms window), so
  // the spacing is checked against three quarters of the window. Without the coalescing the trickle's updates
  // would come ~10 ms apart, so this still fails on a broken window; with 200 ms windows whatever the list's
  // length (5,000 and more viewers here: 1,200 ms) it fails too.
  assert.ok(updates.length >= 2 && updates.length <= 6, `updates: ${updates.length} for ${n} receipts`)
  for (let i = 1; i < updates.length; i++) {
    const listed = (updates[i - 1].payload as { viewers: unknown[] }).viewers.length
    assert.ok(updates[i].at - updates[i - 1].at >= windowMs(listed) * 0.75, `spaced by the window of ${listed} viewers: ${updates.map((u) => u.at - updates[0].at).join(', ')}`)
  }
  const last = updates.at(-1)?.payload as { viewers: unknown[] }
  assert.equal(last.viewers.length, total + n, 'trailing edge carries the final state')
})

test('the commits of several sessions asked in one run are one transaction, each resolving once it is in; a failure rejects them all', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  await h.addSession('s2', { own: '15550000002' })
  const one = await h.app.statuses.send('s1', { type: 'text', content: 'one' })
  const two = await h.app.statuses.send('s2', { type: 'text', content: 'two' })
  const before = h.app.viewerIngest.stats().commits
  // as the platform hands every session's receipt turn over at one setImmediate (src/platform/receipts.ts)
  const asked = [
    h.app.viewerIngest.commit('s1', [receipt(one.platformMessageId, A)]),
    h.app.viewerIngest.commit('s2', [receipt(two.platformMessageId, A), receipt(two.platformMessageId, B)]),
    h.app.viewerIngest.commit('s1', [receipt(one.platformMessageId, C)])
  ]
  await Promise.all(asked)
  assert.equal(h.app.viewerIngest.stats().commits - before, 1, 'one transaction for the three')
  assert.deepEqual((await h.app.statuses.viewers('s1', one.statusId)).map((v) => v.number).sort(), [A, C].sort())
  assert.deepEqual((await h.app.statuses.viewers('s2', two.statusId)).map((v) => v.number).sort(), [A, B].sort())
  // each status its own status-viewers-added, with the viewers of its session
  await waitFor(() => h.of('status-viewers-added').filter((e) => e.statusId === one.statusId || e.statusId === two.statusId).length === 2, 5000, 'both statuses\' events')
  const added = h.of('status-viewers-added').filter((e) => e.statusId === two.statusId)
  assert.deepEqual(added.map((e) => [e.sessionId, e.viewerCount]), [['s2', 2]])

  // the database refuses the transaction: every commit of the run rejects, and none of their views is stored
  const sqlite = dbOf(h.app)
  if (sqlite.dialect !== 'sqlite') return
  sqlite.sqlite.exec("create trigger refuse_d before insert on viewers when new.number = '15551230004' begin select raise(abort, 'refused'); end")
  const failing = [
    h.app.viewerIngest.commit('s1', [receipt(one.platformMessageId, '15551230003')]),
    h.app.viewerIngest.commit('s2', [receipt(two.platformMessageId, '15551230004')])
  ]
  const settled = await Promise.allSettled(failing)
  assert.deepEqual(settled.map((r) => r.status), ['rejected', 'rejected'])
  assert.equal((await h.app.statuses.viewers('s1', one.statusId)).length, 2, 'the other session\'s view was rolled back with it')
})

test('a view stored under a LID gets its number: merged with that number\'s row, earlier view kept, update emitted', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  await h.addSession('s2', { own: '15550000002' })
  const s = await h.app.statuses.send('s1', { type: 'text', content: 'x', targetNumbers: `${A},${B}` })
  const s2 = await h.app.statuses.send('s1', { type: 'text', content: 'y', targetNumbers: A })
  const other = await h.app.statuses.send('s2', { type: 'text', content: 'z' })
  const t0 = Date.now() - 10_000
  await h.app.viewerIngest.commit('s1', [receipt(s.platformMessageId, null, 'read', t0), receipt(s2.platformMessageId, null, 'played', t0 + 500)])
  await h.app.viewerIngest.commit('s1', [receipt(s.platformMessageId, A, 'read', t0 + 1000)]) // the same person, by number, later
  await h.app.viewerIngest.commit('s2', [receipt(other.platformMessageId, null, 'read', t0)]) // the same LID seen by another session
  assert.deepEqual(await h.app.viewerIngest.unmappedLids('s1', 10), [LID])
  assert.deepEqual((await h.app.statuses.viewers('s1', s.statusId)).map((v) => v.number), [null, A], 'two rows until the LID is known')

  const before = h.of('status-viewers-update').length
  await h.app.viewerIngest.lidsMapped('s1', [{ lid: LID, number: A }])
  assert.deepEqual(await h.app.statuses.viewers('s1', s.statusId), [{ jid: `${A}@s.whatsapp.net`, number: A, viewedAt: new Date(t0).toISOString(), isReal: true }])
  assert.deepEqual(await h.app.statuses.viewers('s1', s2.statusId), [{ jid: `${A}@s.whatsapp.net`, number: A, viewedAt: new Date(t0 + 500).toISOString(), isReal: true }])
  assert.deepEqual(await h.app.viewerIngest.unmappedLids('s1', 10), [])
  assert.deepEqual(await h.app.viewerIngest.unmappedLids('s2', 10), [LID], 'another session\'s rows are its own business')
  // (updates go out after the commit's turn: s2's own, from its commit above, may come after `before` too)
  const ofS1 = (): Array<{ statusId: string, viewers: Array<{ number: string | null }> }> => h.of('status-viewers-update').slice(before).filter((u) => u.sessionId === 's1')
  await waitFor(() => new Set(ofS1().map((u) => u.statusId)).size === 2, 2000, 'an update per affected status')
  assert.ok(ofS1().every((u) => u.viewers.every((v) => v.number === A)))
  await h.app.viewerIngest.lidsMapped('s1', [{ lid: LID, number: A }]) // again: nothing left to change
  assert.equal(h.app.viewerIngest.stats().mapped, 2)
})

test('a commit waits for a transaction another caller holds open (whose rollback cannot take the view), and is refused after close', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  const s = await h.app.statuses.send('s1', { type: 'text', content: 'x' })
  let held: Promise<void> | undefined
  let committed = false
  await assert.rejects(dbOf(h.app).db.transaction().execute(async (trx) => {
    await trx.selectFrom('statuses').select('id').execute()
    held = h.app.viewerIngest.commit('s1', [receipt(s.platformMessageId, A)])
    void held.then(() => { committed = true })
    await new Promise((resolve) => setTimeout(resolve, 30))
    assert.equal(committed, false, 'held: the platform keeps the stanza unacknowledged meanwhile')
    throw new Error('the other caller rolls back')
  }), /rolls back/)
  await held
  assert.equal((await h.app.statuses.viewers('s1', s.statusId)).length, 1)

  await h.app.close()
  await assert.rejects(h.app.viewerIngest.commit('s1', [receipt(s.platformMessageId, B)]), /closed/)
  const raw = new SQLite(h.dbFile, { readonly: true })
  try {
    assert.equal(raw.prepare('select count(*) from viewers').pluck().get(), 1)
  } finally {
    raw.close()
  }
})

test('status-error sets the error and emits statuses-updated failed', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  const s = await h.app.statuses.send('s1', { type: 'text', content: 'x' })
  h.platform.emit('status-error', { sessionId: 's1', messageId: s.platformMessageId, error: '479' })
  h.platform.emit('status-error', { sessionId: 's1', messageId: 'UNKNOWN', error: '479' })
  // the send itself emitted statuses-updated `sent` (the list changed); the rejection adds `failed`
  const failed = () => h.of('statuses-updated').filter((e) => e.action !== 'sent')
  assert.deepEqual(h.of('statuses-updated').filter((e) => e.action === 'sent').map((e) => e.statusId), [s.statusId])
  const ev = await waitFor(() => failed()[0], 2000, 'statuses-updated')
  assert.equal(ev.action, 'failed')
  assert.equal(ev.statusId, s.statusId)
  assert.match(ev.message ?? '', /479/)
  const [listed] = await h.app.statuses.list('s1')
  assert.equal(listed.error, '479')
  await new Promise((resolve) => setTimeout(resolve, 30))
  assert.equal(failed().length, 1)
})

test('remove: record and viewers go, media file only when no other status uses it, revoke on request', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')
  const img = await h.addUpload('p.png', 'image')
  const a = await h.app.statuses.send('s1', { type: 'image', content: img, targetNumbers: A })
  const b = await h.app.statuses.send('s1', { type: 'image', content: img })
  await h.app.viewerIngest.commit('s1', [receipt(a.platformMessageId, A)])

  const first = await h.app.statuses.remove('s1', a.statusId)
  assert.deepEqual({ ...first, note: undefined }, { statusId: a.statusId, message: 'Status deleted', deletedFromPlatform: false, deletedFromDatabase: true, deletedImageFile: false, note: undefined })
  assert.match(first.note, /until it expires/)
  assert.ok(existsSync(join(h.uploadDir, img)), 'still used by the other status')
  assert.equal(h.platform.revoked.length, 0)
  const v = await dbOf(h.app).db.selectFrom('viewers').selectAll().execute()
  assert.equal(v.length, 0, 'viewers cascade')

  const second = await h.app.statuses.remove('s1', b.statusId, { revoke: true })
  assert.equal(second.deletedFromPlatform, true)
  assert.equal(second.deletedImageFile, true)
  assert.ok(!existsSync(join(h.uploadDir, img)))
  assert.deepEqual(h.platform.revoked, [{ sessionId: 's1', messageId: b.platformMessageId, recipientJids: [`${OWN}@s.whatsapp.net`] }])
  assert.deepEqual(h.of('status-deleted'), [{ sessionId: 's1', statusId: a.statusId }, { sessionId: 's1', statusId: b.statusId }])

  const c = await h.app.statuses.send('s1', { type: 'text', content: 'x' })
  h.platform.connected.delete('s1')
  const third = await h.app.statuses.remove('s1', c.statusId, { revoke: true })
  assert.equal(third.deletedFromPlatform, false)
  assert.equal(third.deletedFromDatabase, true)
  assert.match(third.note, /not connected/)
  assert.equal(h.platform.revoked.length, 1)
  await rejects(h.app.statuses.remove('s1', c.statusId), 404, /Status not found/)
})

test('cleanup: expired statuses with viewers and media, old unused uploads, one event per affected session', async (t) => {
  const ttlMs = 60_000
  const h = await harness(t, { STATUS_TTL_HOURS: String(ttlMs / 3_600_000) })
  await h.addSession('s1')
  await h.addSession('s2', { own: '15550000002' })
  await h.addSession('s3', { own: '15550000003' })
  const old = Date.now() - ttlMs - 1000
  const usedImg = await h.addUpload('used.jpg', 'image', old)
  const oldUnused = await h.addUpload('unused.jpg', 'image', old)
  const freshUnused = await h.addUpload('fresh.mp4', 'video')
  const keptImg = await h.addUpload('kept.jpg', 'image', old)
  const e1 = await h.app.statuses.send('s1', { type: 'image', content: usedImg })
  const e2 = await h.app.statuses.send('s1', { type: 'text', content: 'a' })
  const e3 = await h.app.statuses.send('s2', { type: 'text', content: 'b' })
  const live = await h.app.statuses.send('s3', { type: 'image', content: keptImg })
  await h.app.viewerIngest.commit('s1', [receipt(e1.platformMessageId, A)])
  await dbOf(h.app).db.updateTable('statuses').set({ created_at: old }).where('id', 'in', [e1, e2, e3].map((s) => Number(s.statusId))).execute()
  assert.equal((await h.app.statuses.list('s1')).length, 0, 'expired statuses are not listed even before cleanup')

  const res = await h.app.statuses.cleanup()
  assert.deepEqual(res, { statuses: 3, uploads: 2 })
  assert.ok(!existsSync(join(h.uploadDir, usedImg)))
  assert.ok(!existsSync(join(h.uploadDir, oldUnused)))
  assert.ok(existsSync(join(h.uploadDir, freshUnused)))
  assert.ok(existsSync(join(h.uploadDir, keptImg)), 'an old upload still used by a live status stays')
  const remaining = await dbOf(h.app).db.selectFrom('statuses').select('id').execute()
  assert.deepEqual(remaining.map((r) => String(r.id)), [live.statusId])
  assert.equal((await dbOf(h.app).db.selectFrom('viewers').selectAll().execute()).length, 0)
  const uploads = await dbOf(h.app).db.selectFrom('uploads').select('filename').orderBy('filename').execute()
  assert.deepEqual(uploads.map((u) => u.filename).sort(), [freshUnused, keptImg].sort())
  // the four sends each emitted statuses-updated `sent`
  const cleanups = () => h.of('statuses-updated').filter((e) => e.action !== 'sent')
  assert.equal(h.of('statuses-updated').filter((e) => e.action === 'sent').length, 4)
  assert.deepEqual(cleanups().map((e) => [e.sessionId, e.action]).sort(), [['s1', 'cleanup'], ['s2', 'cleanup']])
  assert.deepEqual(await h.app.statuses.cleanup(), { statuses: 0, uploads: 0 })
  assert.equal(cleanups().length, 2, 'nothing to clean: no event')
})

test('cleanup runs at start and on the interval', async (t) => {
  const h = await harness(t, { STATUS_TTL_HOURS: String(1 / 3_600_000 * 200), CLEANUP_INTERVAL_MS: '100' })
  await h.addSession('s1')
  await h.app.statuses.send('s1', { type: 'text', content: 'x' })
  const ev = await waitFor(() => h.of('statuses-updated').find((e) => e.action === 'cleanup'), 3000, 'interval cleanup')
  assert.equal(ev.sessionId, 's1')
  assert.equal((await dbOf(h.app).db.selectFrom('statuses').selectAll().execute()).length, 0)
})
