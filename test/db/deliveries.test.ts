import assert from 'node:assert/strict'
import { storesOf } from '../../src/db/stores/index.js'
import type { InCommit } from '../../src/db/stores/viewers.js'
import { dialectTest, openTestDb } from '../support/db-matrix.js'

// Status delivery receipts (migration 011) on both dialects: the earliest per (status, recipient) is kept (a
// redelivery or another device only moves it earlier), receipts of unknown statuses are skipped, a LID's row moves
// to its number (the earlier delivery wins), and the rows go with their status.

/** a commit that appends no event */
const quiet: InCommit<unknown> = { needs: () => ({}), events: () => [] }

dialectTest('deliveries: earliest kept, unknown statuses skipped, LID rows get their number, gone with the status', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const writer = storesOf(handle).viewers
  const statuses = storesOf(handle).statuses
  const now = Date.now()
  await storesOf(handle).sessions.insert({ id: 's1', name: 's1', authMethod: 'qrcode', phoneNumber: null, createdAt: now })
  const statusId = await statuses.insert({
    sessionId: 's1', type: 'text', content: 'x', caption: '', messageId: 'S1', state: 'sent', createdAt: now, contactCount: 2,
    targetNumbers: '1555,1666', mediaFile: null, backgroundColor: null, font: null, error: null
  })
  const d = (number: string | null, jid: string, at: number, messageId = 'S1') => ({ sessionId: 's1', messageId, number, jid, deliveredAt: at })
  await writer.commitReceipts({ views: [], deliveries: [d('1555', '1555@s.whatsapp.net', now + 1000), d('1555', '1555@s.whatsapp.net', now + 500), d(null, '77@lid', now + 200), d('1999', '1999@s.whatsapp.net', now, 'nope')] }, quiet)
  await writer.commitReceipts({ views: [], deliveries: [d('1666', '1666@s.whatsapp.net', now + 300)] }, quiet)
  assert.deepEqual((await statuses.deliveries(statusId)).map((r) => [r.recipient, r.number, r.deliveredAt]), [
    ['77@lid', null, now + 200], ['1666', '1666', now + 300], ['1555', '1555', now + 500]
  ])
  await writer.mapLids('s1', [{ lid: '77@lid', number: '1666' }], quiet)
  assert.deepEqual((await statuses.deliveries(statusId)).map((r) => [r.recipient, r.number, r.jid, r.deliveredAt]), [
    ['1666', '1666', '1666@s.whatsapp.net', now + 200], ['1555', '1555', '1555@s.whatsapp.net', now + 500]
  ])
  await statuses.remove(statusId)
  assert.deepEqual(await statuses.deliveries(statusId), [])
})
