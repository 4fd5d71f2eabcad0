import assert from 'node:assert/strict'
import { test } from 'node:test'
import { waitFor } from '../helper.js'
import { harness, OWN } from '../statuses/harness.js'
import { dbOf } from '../support/db.js'

// A send an audience chose, interrupted by a crash, resumes to the recipients of its snapshot (not the
// contacts as they are now) with the status_setting it started with; the fake platform records the call.
// Sending with an audience hands the platform the resolved recipients and setting.

const jid = (n: string): string => `${n}@s.whatsapp.net`
const LID_ONLY = '900000000013@lid'
const A = '15551230001'
const B = '15551230002'

test('a send with an audience: the platform gets the resolved recipients and setting; a resumed one the snapshot and its setting', async (t) => {
  const h = await harness(t)
  await h.addSession('s1')

  const saved = await h.app.audiences.create('s1', { name: 'two', numbers: [A, OWN, B] })
  const answer = await h.app.statuses.send('s1', { type: 'text', content: 'to the saved two', audience: { type: 'saved', audienceId: saved.id } })
  assert.deepEqual([answer.state, answer.contactCount], ['sent', 2])
  const [first] = h.platform.sent
  assert.deepEqual([first.input.recipients, first.input.statusSetting], [[A, B], 'allowlist'])
  assert.deepEqual((await h.app.statuses.list('s1'))[0].audience?.recipients, [A, B])

  // as a crash leaves it: sending, its message stored, the own number's chunk committed
  const snapshot = { type: 'contacts', audienceId: null, name: null, except: [B], mode: null, statusSetting: 'denylist', recipients: [A, LID_ONLY] }
  const { id } = await dbOf(h.app).db.insertInto('statuses').values({
    session_id: 's1', type: 'text', content: 'left behind', caption: '', message_id: 'MRESUME', state: 'sending', created_at: Date.now(),
    contact_count: 2, target_numbers: '', audience: JSON.stringify(snapshot), message_payload: Buffer.from('stored message'),
    media_file: null, background_color: null, font: null, error: null
  }).returning('id').executeTakeFirstOrThrow()
  await dbOf(h.app).db.insertInto('status_recipients').values({ status_id: id, jid: jid(OWN) }).execute()
  assert.equal(await h.app.statuses.recover(), 1)
  await waitFor(() => h.of('status-sent').find((e) => e.statusId === String(id)), 2000, 'the resumed send')
  const resumed = h.platform.sent.find((c) => c.input.messageId === 'MRESUME')
  assert.deepEqual([resumed?.input.recipients, resumed?.input.statusSetting, resumed?.input.done], [[A, LID_ONLY], 'denylist', [jid(OWN)]])
})
