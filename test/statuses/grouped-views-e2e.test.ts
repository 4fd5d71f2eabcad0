import assert from 'node:assert/strict'
import { test } from 'node:test'
import { waitFor } from '../helper.js'
import { startStack } from '../stack.js'
import { startReceiver } from '../webhooks/receiver.js'
import type { EventPayloads } from '../../schemas/events.js'

// Views in the grouped form the platform sends since 2026-09 (tulir/whatsmeow #1270: `<receipt
// class="status">` with `<participants message_id>` and a type per `<user>`, viewers named by LID) through
// the whole stack: real Baileys linked to the emulator, a socket.io client and a webhook receiver.

const OWN = '4915400000001'
const A = '4915400000011'
const B = '4915400000012'
const C = '4915400000013'
const STRANGER = '4915400000099'
const SID = 'grouped'

type Added = EventPayloads['status-viewers-added']
type Viewer = Added['viewers'][number]

test('grouped receipts: views reach status-viewers, socket.io and webhooks with numbers; deliveries do not', { timeout: 120_000 }, async (t) => {
  const s = await startStack(t, { ALLOW_PRIVATE_URLS: 'true', WEBHOOK_BASE_DELAY_MS: '50', WEBHOOK_MAX_DELAY_MS: '1000' })
  const hookReceiver = await startReceiver(t)
  const hook = await s.api({ method: 'POST', url: '/api/webhooks', payload: { url: hookReceiver.url, events: ['status-viewers-added'], sessionId: SID } })
  assert.equal(hook.statusCode, 200, hook.body)
  const { secret } = hook.json<{ data: { secret: string } }>().data

  // PN-addressed accounts, so that rc14's own status send reaches them; the receipts name them by LID all the same
  const [a, b, c] = [A, B, C].map((number) => s.emu.addContact({ number, legacy: true }))
  const stranger = s.emu.addContact({ number: STRANGER })
  await s.link(SID, OWN, { legacy: true })
  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content: 'grouped', targetNumbers: `${A},${B},${C}` } })
  assert.equal(res.statusCode, 200, res.body)
  const { statusId, platformMessageId } = res.json<{ data: { statusId: string, platformMessageId: string } }>().data
  await s.emu.waitForStatus((r) => r.id === platformMessageId && r.decrypted, 10_000)
  const added = (since = 0): Added[] => s.events.all('status-viewers-added', (p) => p.statusId === statusId).slice(since)
  const viewersIn = (events: Added[]): Viewer[] => events.flatMap((e) => e.viewers)
  const stored = async (): Promise<Viewer[]> =>
    (await s.api({ method: 'GET', url: `/api/sessions/${SID}/status-viewers/${statusId}` })).json<{ data: Viewer[] }>().data
  const byKey = (list: Viewer[]): Viewer[] => [...list].sort((x, y) => (x.number ?? x.jid).localeCompare(y.number ?? y.jid))

  // one stanza: C only delivered, A read (with participant_pn), B played (its LID mapped by the send),
  // the stranger read (a LID nobody can map yet); then the own account's view from another device
  const commitsBefore = s.app.viewerIngest.stats().commits
  const sent = await s.emu.sendGroupedReceipts(platformMessageId, {
    viewers: [
      { viewer: C, type: 'delivery' },
      { viewer: A, type: 'read', participantPn: true },
      { viewer: B, type: 'played' },
      { viewer: STRANGER, type: 'read' }
    ],
    force: true
  })
  assert.ok(sent.ids.every((id) => id.startsWith('SAGR')))
  await waitFor(() => viewersIn(added()).length >= 3, 10_000, 'three viewers added')
  // the stanza's views and its delivery: one turn, one commit (one transaction), and C's delivery is stored
  assert.equal(s.app.viewerIngest.stats().commits - commitsBefore, 1, 'one commit for the views and the delivery')
  const report = (await s.api({ method: 'GET', url: `/api/sessions/${SID}/statuses/${statusId}/report` }))
    .json<{ data: { recipients: Array<{ number: string, deliveredAt: string | null, viewedAt: string | null }> } }>().data
  const cRow = report.recipients.find((r) => r.number === C)
  assert.ok(cRow?.deliveredAt != null && cRow.viewedAt === null, 'C delivered, not viewed')
  await s.emu.sendGroupedReceipts(platformMessageId, { viewers: [OWN], type: 'read', force: true })
  await waitFor(() => viewersIn(added()).length >= 4, 10_000, 'four viewers added')
  await s.emu.settled(5000)

  const list = await stored()
  const numbers = list.map((v) => v.number)
  assert.deepEqual(numbers.filter((n) => n !== null).sort(), [A, B, OWN].sort(), 'A and B under their numbers, no delivery')
  assert.ok(!numbers.includes(C), 'C only delivered: no view')
  assert.deepEqual(list.filter((v) => v.number === null).map((v) => v.jid), [`${stranger.lid}@lid`], 'the stranger under its LID')
  assert.equal(list.find((v) => v.number === A)?.jid, `${A}@s.whatsapp.net`)
  assert.equal(list.find((v) => v.number === OWN)?.isReal, false)
  assert.deepEqual(byKey(viewersIn(added())), byKey(list), 'socket.io status-viewers-added: the same viewers')
  assert.equal(added().at(-1)?.viewerCount, 3, 'A, B and the stranger are real viewers')
  assert.ok(![a, b, c].some((x) => list.some((v) => v.jid === `${x.lid}@lid`)), 'no known viewer left under a LID')

  // the stranger's number arrives with a later grouped receipt (participant_pn): the stored view gets it
  await s.emu.sendGroupedReceipts(platformMessageId, { viewers: [{ viewer: STRANGER, type: 'played', participantPn: true }], force: true })
  const update = await s.events.next('status-viewers-update', (p) => p.statusId === statusId && p.viewers.some((v) => v.number === STRANGER))
  assert.ok(!update.viewers.some((v) => v.number === null), 'nobody left under a LID')
  assert.equal(update.viewers.length, 4)
  assert.deepEqual((await stored()).map((v) => v.number).sort(), [A, B, OWN, STRANGER].sort())

  // webhooks: the same status-viewers-added payloads, signed
  await waitFor(() => hookReceiver.verified(secret).length === added().length, 15_000, 'every status-viewers-added by webhook')
  assert.deepEqual(hookReceiver.verified(secret).map((j) => j.data), added())
  assert.ok(!viewersIn(hookReceiver.verified(secret).map((j) => j.data as Added)).some((v) => v.number === C), 'no delivery by webhook')
})
