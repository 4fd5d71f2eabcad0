import assert from 'node:assert/strict'
import { test } from 'node:test'
import { io as connect, type Socket } from 'socket.io-client'
import { API_KEY } from '../support/service.js'
import { waitFor } from '../helper.js'
import { killableService } from '../durability/killable.js'

// Real Baileys against the emulator, the service as a process. A socket.io client hears a send, goes
// away, misses a second send and its views, and comes back with auth.after = the last eventId it saw: it
// gets exactly the missed events, in order, then live ones; GET /api/events gives the same sequence.

const OWN = '15557200001'
const SID = 'catchup'

interface Heard { type: string, payload: Record<string, unknown> & { eventId?: number } }

async function listen (base: string, auth: Record<string, unknown> = {}): Promise<{ socket: Socket, heard: Heard[] }> {
  const socket = connect(base, { path: '/socket.io/', auth: { apiKey: API_KEY, ...auth }, transports: ['websocket'], reconnection: false, forceNew: true })
  const heard: Heard[] = []
  socket.onAny((type: string, payload: Heard['payload']) => { heard.push({ type, payload }) })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error('socket.io connect timed out')) }, 10_000)
    socket.once('connect', () => { clearTimeout(timer); resolve() })
    socket.once('connect_error', (err) => { clearTimeout(timer); reject(err) })
  })
  return { socket, heard }
}

test('a client that missed a send and its views catches up with auth.after: the missed events in order, then live ones, as GET /api/events lists them', { timeout: 170_000 }, async (t) => {
  const { emu, svc, api } = await killableService(t, { tempPrefix: 'st-catchup-', sessionId: SID, number: OWN, env: { LOG_LEVEL: 'warn' } })
  const contacts = emu.addContacts(6, { prefix: '4475' }).map((c) => c.number)
  const first = await listen(svc.base)
  t.after(() => { first.socket.close() })

  const one = await api.post<{ statusId: string }>(`/sessions/${SID}/send-status`, { type: 'text', content: 'one', targetNumbers: contacts.slice(0, 2).join(',') })
  await waitFor(() => first.heard.some((h) => h.type === 'status-sent' && h.payload.statusId === one.statusId) ? true : undefined, 20_000, 'status-sent of the first status')
  const seen = first.heard.filter((h) => typeof h.payload.eventId === 'number')
  const last = seen[seen.length - 1].payload.eventId as number
  first.socket.close()

  // missed: a send and three views of it
  const two = await api.post<{ statusId: string, platformMessageId: string }>(`/sessions/${SID}/send-status`, { type: 'text', content: 'two', targetNumbers: contacts.slice(0, 4).join(',') })
  await emu.waitForStatus((s) => s.id === two.platformMessageId && s.decrypted)
  await emu.sendViews(two.platformMessageId, { viewers: contacts.slice(0, 3), force: true })
  await waitFor(async () => (await api.get<unknown[]>(`/sessions/${SID}/status-viewers/${two.statusId}`)).length === 3 ? true : undefined, 20_000, 'three views stored')
  // the throttled full-list update is logged too; let it be written before coming back
  await new Promise((resolve) => setTimeout(resolve, 500))
  const missed = await api.get<{ events: Array<{ eventId: number, type: string, data: Record<string, unknown> }> }>(`/events?after=${last}&limit=1000`)
  assert.ok(missed.events.some((e) => e.type === 'status-sent' && e.data.statusId === two.statusId), 'the missed status-sent is in the log')
  const addedMissed = missed.events.filter((e) => e.type === 'status-viewers-added' && e.data.statusId === two.statusId)
  assert.deepEqual(addedMissed.flatMap((e) => (e.data.viewers as Array<{ number: string }>).map((v) => v.number)).sort(), contacts.slice(0, 3).sort())
  assert.ok(missed.events.every((e) => !['qr-code', 'pairing-code'].includes(e.type)), 'codes are not logged')

  // back, from the last event it saw
  const back = await listen(svc.base, { after: last })
  t.after(() => { back.socket.close() })
  await waitFor(() => back.heard.length >= missed.events.length ? true : undefined, 10_000, `the ${missed.events.length} missed events`)
  assert.deepEqual(back.heard.slice(0, missed.events.length).map((h) => ({ type: h.type, data: h.payload })), missed.events.map((e) => ({ type: e.type, data: e.data })), 'exactly the missed events, in order')

  // then live: another view of the second status
  await emu.sendViews(two.platformMessageId, { viewers: [contacts[3]], force: true })
  await waitFor(() => back.heard.some((h) => h.type === 'status-viewers-added' && (h.payload.viewers as Array<{ number: string }>).some((v) => v.number === contacts[3])) ? true : undefined, 20_000, 'the live view')
  await new Promise((resolve) => setTimeout(resolve, 500))
  const all = await api.get<{ events: Array<{ eventId: number, type: string, data: Record<string, unknown> }> }>(`/events?after=${last}&limit=1000`)
  const ids = back.heard.map((h) => h.payload.eventId)
  assert.ok(all.events.length > missed.events.length)
  assert.deepEqual(ids, all.events.map((e) => e.eventId), 'missed then live: the log\'s sequence, no gap, no repeat')
  assert.deepEqual(back.heard.map((h) => ({ type: h.type, data: h.payload })), all.events.map((e) => ({ type: e.type, data: e.data })))
})
