import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { SQLite as Database } from '../../src/db/sqlite/driver.js'
import { serviceApi } from '../support/clients.js'
import { sleep } from '../support/wait.js'
import { waitFor } from '../helper.js'
import { killableService } from '../durability/killable.js'
import { startReceiver } from '../webhooks/receiver.js'

// The service as a real process, real Baileys against the emulator, a webhook receiver subscribed to
// status-viewers-added. A viewer burst (in waves) is cut by SIGKILL five times at random moments, the service
// restarted on the same folder each time. status-viewers-added is written in the receipts' own commit
// and its deliveries are made from the event log after it: once everything is redelivered and settled,
// the viewers the delivered webhooks announced are exactly the viewers stored (none stored and never
// announced, none announced and not stored), each announced once per event id.

const OWN = '15557100001'
const SID = 'evkill'
const BURST = 1800
const KILLS = 5

test('SIGKILL during a viewer burst with a webhook receiver: the viewers announced by delivered webhooks equal the viewers stored', { timeout: 175_000 }, async (t) => {
  const k = await killableService(t, {
    tempPrefix: 'st-evkill-',
    sessionId: SID,
    number: OWN,
    env: { LOG_LEVEL: 'warn', ALLOW_PRIVATE_URLS: 'true', WEBHOOK_BASE_DELAY_MS: '50', WEBHOOK_MAX_DELAY_MS: '500' }
  })
  const { emu, start, api } = k
  let svc = k.svc
  const rx = await startReceiver(t, 200)
  const hook = await api.post<{ id: string, secret: string }>('/webhooks', { url: rx.url, events: ['status-viewers-added'] })

  const contacts = emu.addContacts(BURST, { prefix: '4474' }).map((c) => c.number)
  const status = await api.post<{ statusId: string, platformMessageId: string }>(`/sessions/${SID}/send-status`, { type: 'text', content: 'burst', targetNumbers: contacts.slice(0, 3).join(',') })
  await emu.waitForStatus((s) => s.id === status.platformMessageId && s.decrypted)
  await emu.settled()

  const db = new Database(join(svc.dataDir, 'status-tracker.db'), { readonly: true, fileMustExist: true })
  t.after(() => { db.close() })
  const rows = db.prepare<[number], number>('select count(*) from viewers where status_id = ?').pluck()
  const committed = (): number => rows.get(Number(status.statusId)) ?? 0

  // the burst in waves, one per kill and a last one; each kill comes a random 0-300 ms into its wave,
  // while receipts are being committed and deliveries made and sent
  const wave = Math.ceil(BURST / (KILLS + 1))
  const connected = async (): Promise<void> => {
    await waitFor(async () => (await serviceApi(svc.base).get<{ connected: boolean }>(`/sessions/${SID}/connection-status`)).connected ? true : undefined, 60_000, 'the session to reconnect')
  }
  for (let i = 0; i < KILLS; i++) {
    await emu.sendViews(status.platformMessageId, { viewers: contacts.slice(i * wave, (i + 1) * wave), force: true })
    await sleep(Math.floor(Math.random() * 300))
    svc.child.kill('SIGKILL')
    await svc.exited
    t.diagnostic(`SIGKILL ${i + 1}: ${committed()} of ${(i + 1) * wave} views sent so far committed, ${rx.accepted().length} webhooks accepted`)
    await waitFor(() => emu.ackStats(OWN).every((c) => !c.connected), 10_000, 'the emulator to see the connection closed')
    svc = await start()
    await connected()
  }
  await emu.sendViews(status.platformMessageId, { viewers: contacts.slice(KILLS * wave), force: true })

  await waitFor(() => emu.unackedCount(OWN) === 0 && committed() === BURST, 90_000, 'every receipt redelivered, committed and acked')
  const stored = new Set(db.prepare<[number], string>('select number from viewers where status_id = ?').pluck().all(Number(status.statusId)))
  assert.equal(stored.size, BURST)

  const wh = new Webhook(hook.secret)
  const announced = (): Map<number, string[]> => {
    const byEvent = new Map<number, string[]>()
    for (const r of rx.accepted()) {
      const body = wh.verify(r.body, r.headers) as { eventId: number, data: { statusId: string, eventId: number, viewers: Array<{ number: string }> } }
      assert.equal(body.data.eventId, body.eventId)
      assert.equal(r.headers['webhook-id'], `msg_ev${body.eventId}`)
      if (body.data.statusId === status.statusId) byEvent.set(body.eventId, body.data.viewers.map((v) => v.number))
    }
    return byEvent
  }
  const numbers = (m: Map<number, string[]>): string[] => [...m.values()].flat()
  await waitFor(() => new Set(numbers(announced())).size >= stored.size ? true : undefined, 60_000, 'every stored viewer announced by a delivered webhook')
  const byEvent = announced()
  const all = numbers(byEvent)
  assert.deepEqual([...new Set(all)].sort(), [...stored].sort(), 'announced = stored')
  // a viewer is new once: no two events announce the same one
  assert.equal(all.length, stored.size, 'each viewer in exactly one event')
  t.diagnostic(`${byEvent.size} status-viewers-added events delivered for ${stored.size} viewers; ${rx.accepted().length} accepted requests (repeats after a kill share their webhook-id)`)
  const viewers = await serviceApi(svc.base).get<Array<{ number: string }>>(`/sessions/${SID}/status-viewers/${status.statusId}`)
  assert.equal(viewers.length, BURST)
})
