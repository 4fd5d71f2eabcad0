import assert from 'node:assert/strict'
import { test } from 'node:test'
import { waitFor } from '../helper.js'
import { startStack } from '../stack.js'
import { startReceiver } from '../webhooks/receiver.js'
import type { EventPayloads } from '../../schemas/events.js'

// status-viewers-added through the whole stack: real Baileys linked to the emulator, receipts sent by the
// emulator's contacts, a socket.io client and a webhook receiver on 127.0.0.1.

const OWN = '4915300000001'
const A = '4915300000011'
const B = '4915300000012'
const C = '4915300000013'
const SID = 'live'

type Added = EventPayloads['status-viewers-added']
type Viewer = Added['viewers'][number]

test('status-viewers-added: only the new viewers, the right count, LIDs mapped, nothing for a repeat', { timeout: 120_000 }, async (t) => {
  const s = await startStack(t, { ALLOW_PRIVATE_URLS: 'true', WEBHOOK_BASE_DELAY_MS: '50', WEBHOOK_MAX_DELAY_MS: '1000' })
  const hookReceiver = await startReceiver(t)
  const hook = await s.api({ method: 'POST', url: '/api/webhooks', payload: { url: hookReceiver.url, events: ['status-viewers-added'], sessionId: SID } })
  assert.equal(hook.statusCode, 200, hook.body)
  const { secret } = hook.json<{ data: { secret: string } }>().data

  await s.link(SID, OWN)
  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content: 'who is watching', targetNumbers: `${A},${B},${C}` } })
  assert.equal(res.statusCode, 200, res.body)
  const { statusId, platformMessageId } = res.json<{ data: { statusId: string, platformMessageId: string } }>().data
  await s.emu.waitForStatus((r) => r.id === platformMessageId && r.decrypted, 10_000)
  const added = (since = 0): Added[] => s.events.all('status-viewers-added', (p) => p.statusId === statusId).slice(since)
  const stored = async (): Promise<Viewer[]> =>
    (await s.api({ method: 'GET', url: `/api/sessions/${SID}/status-viewers/${statusId}` })).json<{ data: Viewer[] }>().data
  const listedCount = async (): Promise<number | undefined> =>
    (await s.api({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })).json<{ data: Array<{ id: string, viewerCount: number }> }>().data.find((r) => r.id === statusId)?.viewerCount
  const viewersIn = (events: Added[]): Viewer[] => events.flatMap((e) => e.viewers)

  // A by number, B by LID (mapped: the send learned it), the own number from another device, C only delivered
  await s.emu.sendView(platformMessageId, { viewer: C, type: 'delivery' })
  await s.emu.sendView(platformMessageId, { viewer: A, type: 'read', via: 'pn' })
  await s.emu.sendView(platformMessageId, { viewer: B, type: 'played', via: 'lid' })
  await s.emu.sendView(platformMessageId, { viewer: OWN, type: 'read', via: 'pn' })
  await waitFor(() => viewersIn(added()).length >= 3, 10_000, 'three viewers added')
  const first = added()
  const list = await stored()
  assert.equal(list.length, 3)
  // each viewer once, exactly as the full list (and status-viewers-update) shows it
  const sortKey = (v: Viewer): string => v.number ?? v.jid
  assert.deepEqual([...viewersIn(first)].sort((a, b) => sortKey(a).localeCompare(sortKey(b))), [...list].sort((a, b) => sortKey(a).localeCompare(sortKey(b))))
  const b = viewersIn(first).find((v) => v.number === B)
  assert.deepEqual(b, { jid: `${B}@s.whatsapp.net`, number: B, viewedAt: b?.viewedAt, isReal: true }, 'the LID viewer under its number')
  assert.equal(viewersIn(first).find((v) => v.number === OWN)?.isReal, false)
  // the count after each event: the real viewers committed so far (own devices not counted)
  let real = 0
  for (const e of first) {
    real += e.viewers.filter((v) => v.isReal).length
    assert.equal(e.viewerCount, real)
    assert.equal(e.sessionId, SID)
  }
  assert.equal(first.at(-1)?.viewerCount, 2)
  assert.equal(await listedCount(), 2, 'the same count as sent-statuses')

  // a repeated view adds nobody; the next new viewer (sent after it, so handled after it) comes alone
  const mark = added().length
  await s.emu.sendView(platformMessageId, { viewer: A, type: 'played', via: 'lid' })
  await s.emu.sendView(platformMessageId, { viewer: C, type: 'read', via: 'pn' })
  await waitFor(() => added(mark).length >= 1, 10_000, 'C added')
  await s.emu.settled(5000)
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.deepEqual(added(mark).map((e) => [e.viewers.map((v) => v.number), e.viewerCount]), [[[C], 3]], 'the repeat by A gave no event')

  // a viewer whose LID nobody can map yet: added under the LID, as in status-viewers-update
  const stranger = s.emu.addContact({ number: '4915300000099' })
  const lidMark = added().length
  await s.emu.sendView(platformMessageId, { viewer: stranger.number, type: 'read', via: 'lid', force: true })
  await waitFor(() => added(lidMark).length >= 1, 10_000, 'the LID viewer added')
  const byLid = added(lidMark)[0]
  assert.deepEqual(byLid.viewers.map((v) => [v.jid, v.number, v.isReal]), [[`${stranger.lid}@lid`, null, true]])
  assert.equal(byLid.viewerCount, 4)
  const update = await s.events.next('status-viewers-update', (p) => p.statusId === statusId && p.viewers.some((v) => v.jid === `${stranger.lid}@lid`))
  assert.deepEqual(update.viewers.find((v) => v.number === null), byLid.viewers[0])

  // receipts that arrive together: one event per status for all of them, each viewer once
  const crowd = s.emu.addContacts(30, { prefix: '4915399' }).map((c) => c.number)
  const crowdMark = added().length
  await s.emu.sendViews(platformMessageId, { viewers: crowd, force: true })
  await waitFor(() => viewersIn(added(crowdMark)).length >= crowd.length, 10_000, 'the crowd added')
  const crowdEvents = added(crowdMark)
  assert.deepEqual(viewersIn(crowdEvents).map((v) => v.number).sort(), [...crowd].sort())
  assert.ok(crowdEvents.length < crowd.length, `${crowd.length} receipts sent together, ${crowdEvents.length} events`)
  assert.equal(crowdEvents.at(-1)?.viewerCount, 4 + crowd.length)
  assert.equal(await listedCount(), 4 + crowd.length)

  // webhooks get the same payloads, signed, in order
  await waitFor(() => hookReceiver.verified(secret).length === added().length, 15_000, 'every status-viewers-added by webhook')
  const hooked = hookReceiver.verified(secret)
  assert.ok(hooked.every((j) => j.type === 'status-viewers-added'))
  assert.deepEqual(hooked.map((j) => j.data), added())
})
