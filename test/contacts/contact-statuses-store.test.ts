import assert from 'node:assert/strict'
import type { ContactStatus } from '../../src/platform/platform.js'
import type { ContactStatusPage, ContactStatusView } from '../../schemas/contact-statuses.js'
import { build } from '../helper.js'
import { dialectEnv, dialectTest } from '../support/db-matrix.js'
import { insertSession } from '../support/sessions.js'
import { dbOf } from '../support/db.js'

// Contacts' statuses as the service keeps them (what the platform hands the sink before it acks the <status>
// stanza) and as GET …/contact-statuses shows them, on both backends: idempotent by message id (a redelivered copy
// that no longer decrypts does not replace the one read), newest first, paged, the media key never shown, gone with
// the 24-hour cleanup, with one contact-status event per new status. Through real Baileys and the emulator:
// test/statuses/contact-statuses-e2e.test.ts.

const SID = 'watcher'
const HOUR = 3_600_000

const status = (messageId: string, over: Partial<ContactStatus> = {}): ContactStatus => ({
  messageId,
  fromJid: '900000000011@lid',
  fromLid: '900000000011@lid',
  fromNumber: null,
  type: 'text',
  text: `text of ${messageId}`,
  caption: null,
  mimetype: null,
  size: null,
  mediaRef: null,
  postedAt: Date.now(),
  error: null,
  mentionsMe: false,
  groupJid: null,
  groupSubject: null,
  ...over
})

dialectTest("contacts' statuses: committed once per message id, listed newest first and paged, expired with the cleanup", async (t, dialect) => {
  const { app, api } = await build(t, await dialectEnv(dialect))
  const now = Date.now()
  for (const id of [SID, 'other']) {
    await insertSession(app, id, { createdAt: now })
  }
  const events: unknown[] = []
  app.domainEvents.on('contact-status', (e) => { events.push(e) })
  const page = async (query = ''): Promise<ContactStatusPage> => {
    const res = await api({ method: 'GET', url: `/api/sessions/${SID}/contact-statuses${query}` })
    assert.equal(res.statusCode, 200, res.body)
    return res.json<{ data: ContactStatusPage }>().data
  }
  assert.deepEqual(await page(), { statuses: [], nextCursor: null })

  const { sink } = app.contactStatusIntake
  const ref = JSON.stringify({ kind: 'image', url: null, directPath: '/v/x.enc', mediaKey: 'c2VjcmV0LWtleQ==', mimetype: 'image/jpeg', size: 5000 })
  await sink.commit(SID, status('3A01'))
  await sink.commit(SID, status('3A02', { type: 'image', text: null, caption: 'pic', mimetype: 'image/jpeg', size: 5000, mediaRef: ref, fromNumber: '4915300000011' }))
  await sink.commit(SID, status('3A03', { fromJid: '4915300000012@s.whatsapp.net', fromLid: null, fromNumber: '4915300000012' }))
  await sink.commit('other', status('3A01'))
  // a redelivered copy that could not be decrypted this time: the status as first read stays
  await sink.commit(SID, status('3A01', { type: 'undecryptable', text: null, error: 'Key used already or never filled' }))
  // an old one (from before a restart): beyond the 24 hours, never listed, gone with the cleanup
  await sink.commit(SID, status('3A00', { postedAt: now - 25 * HOUR }))

  const all = await page()
  assert.deepEqual(all.statuses.map((s) => [s.id, s.type, s.text, s.caption, s.number, s.lid]), [
    ['3A03', 'text', 'text of 3A03', null, '4915300000012', null],
    ['3A02', 'image', null, 'pic', '4915300000011', '900000000011@lid'],
    ['3A01', 'text', 'text of 3A01', null, null, '900000000011@lid']
  ])
  const image = all.statuses[1]
  assert.deepEqual([image.mediaType, image.mediaSize, image.viewedAt, image.error], ['image/jpeg', 5000, null, null])
  assert.ok(!JSON.stringify(all).includes('c2VjcmV0LWtleQ'), 'the media key is never shown')
  assert.deepEqual(Object.keys(image).sort(), [
    'caption', 'error', 'groupJid', 'groupSubject', 'id', 'jid', 'lid', 'likeEmoji', 'likedAt', 'mediaSize', 'mediaType', 'mentionsMe', 'number', 'postedAt', 'receivedAt', 'replies', 'text', 'type', 'viewedAt'
  ])
  assert.deepEqual([image.mentionsMe, image.groupJid, image.groupSubject], [false, null, null])
  // one event per new status (the redelivery none), with the row as listed
  assert.equal(events.length, 5)
  assert.deepEqual((events[1] as { sessionId: string, status: ContactStatusView }).status, { ...image })

  const first = await page('?limit=2')
  assert.deepEqual(first.statuses.map((s) => s.id), ['3A03', '3A02'])
  const second = await page(`?limit=2&cursor=${first.nextCursor!}`)
  assert.deepEqual(second, { statuses: [all.statuses[2]], nextCursor: null })

  const one = await api({ method: 'GET', url: `/api/sessions/${SID}/contact-statuses/3A02` })
  assert.deepEqual(one.json(), { success: true, data: image })
  for (const [url, code, error] of [
    [`/api/sessions/${SID}/contact-statuses/3A99`, 404, 'Status not found'],
    [`/api/sessions/${SID}/contact-statuses/3A00`, 404, 'Status not found'],
    ['/api/sessions/nobody/contact-statuses', 404, 'Session not found'],
    [`/api/sessions/${SID}/contact-statuses?limit=0`, 400, /querystring\.limit/],
    [`/api/sessions/${SID}/contact-statuses?cursor=x`, 400, /querystring\.cursor/],
    [`/api/sessions/${SID}/contact-statuses/bad%20id`, 400, /params\.statusId/]
  ] as const) {
    const res = await api({ method: 'GET', url })
    assert.equal(res.statusCode, code, url)
    if (typeof error === 'string') assert.equal(res.json<{ error: string }>().error, error)
    else assert.match(res.json<{ error: string }>().error, error)
  }
  // the media and the read receipt go through the session's socket: with several nodes (PostgreSQL) to the node
  // that holds it (none here: 503); on one node a status without media is a 404, and a session not connected
  // sends no read receipt and records no view
  const media = await api({ method: 'GET', url: `/api/sessions/${SID}/contact-statuses/3A01/media` })
  const view = await api({ method: 'POST', url: `/api/sessions/${SID}/contact-statuses/3A01/view` })
  if (dialect === 'sqlite') {
    assert.deepEqual([media.statusCode, media.json<{ error: string }>().error], [404, 'This status has no media'])
    assert.deepEqual([view.statusCode, view.json<{ error: string }>().error], [500, 'WhatsApp is not connected'])
  } else {
    assert.deepEqual([media.statusCode, view.statusCode], [503, 503])
  }
  assert.equal((await page()).statuses[2].viewedAt, null)

  // the status expiry cleanup removes contacts' statuses older than the TTL too
  const count = async (): Promise<number> => (await dbOf(app).db.selectFrom('contact_statuses').select('message_id').execute()).length
  assert.equal(await count(), 5)
  await app.statuses.cleanup()
  assert.equal(await count(), 4)
  assert.deepEqual((await page()).statuses.map((s) => s.id), ['3A03', '3A02', '3A01'])
})
