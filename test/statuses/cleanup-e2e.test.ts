import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { form, jpeg } from '../uploads/fixtures.js'
import { waitFor } from '../helper.js'
import { mediaTrusted, startStack } from '../stack.js'
import { dbOf } from '../support/db.js'

const OWN = '4915200000001'
const A = '4915200000011'

test('cleanup: with a tiny STATUS_TTL_HOURS expired statuses, viewers and files go, and statuses-updated cleanup is emitted', { timeout: 60_000 }, async (t) => {
  // 3.6 s: long enough to send and view, short enough for the interval to catch it quickly
  const s = await startStack(t, { STATUS_TTL_HOURS: '0.001', CLEANUP_INTERVAL_MS: '400' })
  await s.link('old', OWN)
  const upload = async (name: string) => {
    const { payload, headers } = form({ field: 'image', filename: name, type: 'image/jpeg', data: jpeg() })
    const res = await s.api({ method: 'POST', url: '/api/upload-image', payload, headers })
    assert.equal(res.statusCode, 200, res.body)
    return res.json<{ filename: string }>().filename
  }
  const unused = await upload('never-sent.jpg')
  const sendBody: Array<Record<string, string>> = [{ type: 'text', content: 'short-lived', targetNumbers: A }]
  let used: string | null = null
  if (mediaTrusted()) {
    used = await upload('sent.jpg')
    sendBody.push({ type: 'image', content: used, targetNumbers: A })
  }
  const sent: Array<{ statusId: string, platformMessageId: string }> = []
  for (const body of sendBody) {
    const res = await s.api({ method: 'POST', url: '/api/sessions/old/send-status', payload: body })
    assert.equal(res.statusCode, 200, res.body)
    sent.push(res.json<{ data: { statusId: string, platformMessageId: string } }>().data)
  }
  await s.emu.waitForStatus((x) => x.id === sent[0].platformMessageId && x.decrypted, 10_000)
  await s.emu.sendView(sent[0].platformMessageId, { viewer: A })
  await waitFor(async () => (await dbOf(s.app).db.selectFrom('viewers').selectAll().execute()).length === 1, 3000, 'the view to be stored')

  await s.events.next('statuses-updated', (p) => p.action === 'cleanup' && p.sessionId === 'old', 15_000)
  await waitFor(async () => (await dbOf(s.app).db.selectFrom('statuses').selectAll().execute()).length === 0, 5000, 'every status to expire')
  // the statuses were sent a moment apart, so one or two interval runs may have taken them: the counts add up
  // (a run emits its event after removing the media files, a moment after the rows are gone: wait for it)
  const removed = () => s.events.all('statuses-updated', (p) => p.action === 'cleanup' && p.sessionId === 'old')
    .map((p) => Number(/^([0-9]+) expired/.exec(p.message ?? '')?.[1]))
  await waitFor(() => removed().reduce((a, b) => a + b, 0) >= sent.length, 5000, 'the cleanup events').catch(() => {})
  assert.equal(removed().reduce((a, b) => a + b, 0), sent.length, `cleanup events: ${removed().join(', ')}`)
  await waitFor(async () => (await dbOf(s.app).db.selectFrom('uploads').selectAll().execute()).length === 0, 5000, 'old uploads to go')
  assert.equal((await dbOf(s.app).db.selectFrom('statuses').selectAll().execute()).length, 0)
  assert.equal((await dbOf(s.app).db.selectFrom('viewers').selectAll().execute()).length, 0)
  assert.ok(!existsSync(join(s.config.uploadDir, unused)))
  if (used !== null) assert.ok(!existsSync(join(s.config.uploadDir, used)))
  const list = await s.api({ method: 'GET', url: '/api/sessions/old/sent-statuses' })
  assert.deepEqual(list.json(), { success: true, data: [] })
  assert.deepEqual(await s.app.statuses.cleanup(), { statuses: 0, uploads: 0 })
})
