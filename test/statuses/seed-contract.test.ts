import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startStack } from '../stack.js'

// The seed contract by default (issue 23), through real Baileys against the emulator, with no setting changed:
// a send-status request without `wait` answers 200 with the end of the send however long the list (no 202
// unless the client asks with `wait: false` or the operator sets SEND_WAIT_MAX_RECIPIENTS), and
// `statuses-updated` comes whenever the sent-statuses list changes: a new send and a delete, besides the
// finer status-sent and status-deleted.

const OWN = '4915400000031'
const SID = 'seed'

test('seed contract by default: a list over 1,000 recipients waits and answers 200; statuses-updated on send and on delete', { timeout: 170_000 }, async (t) => {
  const s = await startStack(t)
  await s.link(SID, OWN)
  // more than the 1,000 the old default held: with it this answered 202 `sending`
  const many = s.emu.addContacts(1001, { prefix: '4478' }).map((c) => c.number)

  const since = s.events.mark()
  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content: 'to everyone, held', targetNumbers: many.join(',') } })
  assert.equal(res.statusCode, 200, res.body)
  const data = res.json<{ data: { statusId: string, state: string, sentCount: number, contactCount: number, platformMessageId: string } }>().data
  assert.deepEqual([data.state, data.sentCount, data.contactCount], ['sent', 1001, 1001])
  const record = await s.emu.waitForStatus((r) => r.id === data.platformMessageId && r.decrypted && r.recipients.length === 1002, 60_000)
  assert.deepEqual(record.errors, [])

  const sent = await s.events.first('statuses-updated', (p) => p.statusId === data.statusId, since, 10_000)
  assert.equal(sent.action, 'sent')
  assert.equal(sent.sessionId, SID)
  await s.events.first('status-sent', (p) => p.statusId === data.statusId, since, 10_000)

  const beforeDelete = s.events.mark()
  const del = await s.api({ method: 'DELETE', url: `/api/sessions/${SID}/delete-status/${data.statusId}` })
  assert.equal(del.statusCode, 200, del.body)
  const deleted = await s.events.first('statuses-updated', (p) => p.statusId === data.statusId, beforeDelete, 10_000)
  assert.deepEqual([deleted.sessionId, deleted.action], [SID, 'deleted'])
  await s.events.first('status-deleted', (p) => p.statusId === data.statusId, beforeDelete, 10_000)
  const list = (await s.api({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })).json<{ data: unknown[] }>().data
  assert.deepEqual(list, [])
})
