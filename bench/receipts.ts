/**
 * View receipts end to end: the emulator sends read receipts for one status (from real Baileys' point
 * of view: `<receipt type="read" from="status@broadcast" participant=…>` stanzas on its socket), the
 * service records each viewer in SQLite and pushes `status-viewers-update` to a socket.io client.
 *
 * 1. Burst: N receipts from N contacts as fast as the socket takes them. Done when SQLite (read
 *    read-only from the file) holds every viewer AND a socket.io event carried all of them.
 * 2. Paced at 1,000/s (10 every 10 ms) on a second status: per receipt, the time from asking the
 *    emulator to send it until the first status-viewers-update listing that viewer.
 *
 * The viewers did not receive the status: sending one status to 20,000 contacts takes minutes (one
 * Signal session per device), so the views are sent with the emulator's `force` (it skips its
 * recipient check). What the service does with a receipt does not depend on that.
 */
import { createHistogram } from 'node:perf_hooks'
import { SQLite as Database } from '../src/db/sqlite.js'
import { join } from 'node:path'
import { runBench, type Figure } from './lib/bench.js'
import { connectSocket, emulatorApi, linkSessions, poll, serviceApi } from './lib/clients.js'
import { cpuSeconds, sleep } from './lib/procs.js'

interface ViewersUpdate { sessionId: string, statusId: string, viewers: Array<{ number: string }> }
interface Sent { statusId: string, platformMessageId: string }

await runBench('receipts', 240_000, async ({ smoke, log, emulator, service }) => {
  const burst = smoke ? 200 : 20_000
  const pacedRate = 1000
  const pacedSeconds = smoke ? 0.2 : 5
  const paced = Math.round(pacedRate * pacedSeconds)
  const svc = await service()
  const emu = emulatorApi((await emulator()).controlUrl)
  const api = serviceApi(svc.base)
  const socket = await connectSocket(svc.base)
  // events missed while disconnected are gone (the next update only follows the next view): say so
  let dropped: string | null = null
  socket.on('disconnect', (reason) => { dropped = reason })
  const connected = (): void => { if (dropped !== null) throw new Error(`the socket.io client was disconnected (${dropped})`) }
  await linkSessions(api, emu, [{ sessionId: 'views', number: '15553000001' }])

  const contacts = (await emu.addContacts(burst + paced, '4471')).map((c) => c.number)
  const sendStatus = async (text: string): Promise<Sent> =>
    await api.post<Sent>('/sessions/views/send-status', { type: 'text', content: text, targetNumbers: contacts.slice(0, 10).join(',') })
  const db = new Database(join(svc.dataDir, 'status-tracker.db'), { readonly: true, fileMustExist: true })
  const countViewers = db.prepare<[number], number>('select count(*) from viewers where status_id = ?').pluck()

  try {
    // ---- 1. burst
    const a = await sendStatus('burst')
    let lastEvent = { at: 0, count: 0 }
    socket.on('status-viewers-update', (e: ViewersUpdate) => {
      if (e.statusId === a.statusId) lastEvent = { at: performance.now(), count: e.viewers.length }
    })
    const viewersA = contacts.slice(0, burst)
    const cpu0 = cpuSeconds(svc.pid)
    const t0 = performance.now()
    await emu.sendViews(a.platformMessageId, viewersA, { force: true })
    const sentMs = performance.now() - t0
    const stored = await poll(async () => countViewers.get(Number(a.statusId)) === burst ? performance.now() : undefined, 120_000, `${burst} viewers in SQLite`, 5)
    const evented = await poll(async () => { connected(); return lastEvent.count === burst ? lastEvent.at : undefined }, 60_000, 'the last status-viewers-update', 5)
    const totalS = (Math.max(stored, evented) - t0) / 1000
    const cpuPerReceipt = (cpuSeconds(svc.pid) - cpu0) / burst * 1e6
    log(`burst: emulator wrote ${burst} receipts in ${sentMs.toFixed(0)} ms; all in SQLite after ${(stored - t0).toFixed(0)} ms, last event after ${(evented - t0).toFixed(0)} ms; service CPU ${cpuPerReceipt.toFixed(0)} µs per receipt`)

    // ---- 2. paced
    const b = await sendStatus('paced')
    const viewersB = contacts.slice(burst, burst + paced)
    const sentAt = new Map<string, number>()
    const latency = createHistogram()
    socket.on('status-viewers-update', (e: ViewersUpdate) => {
      if (e.statusId !== b.statusId) return
      const at = performance.now()
      for (const v of e.viewers) {
        const t = sentAt.get(v.number)
        if (t === undefined) continue
        latency.record(Math.max(1, Math.round((at - t) * 1000))) // µs
        sentAt.delete(v.number)
      }
    })
    const batch = pacedRate / 100
    const start = performance.now()
    const requests: Array<Promise<unknown>> = []
    for (let i = 0; i < viewersB.length; i += batch) {
      const due = start + (i / batch) * 10
      const wait = due - performance.now()
      if (wait > 1) await sleep(wait)
      const group = viewersB.slice(i, i + batch)
      const now = performance.now()
      for (const v of group) sentAt.set(v, now)
      requests.push(emu.sendViews(b.platformMessageId, group, { force: true }))
    }
    await Promise.all(requests)
    const pacedFor = (performance.now() - start) / 1000
    await poll(async () => { connected(); return sentAt.size === 0 }, 30_000, 'every paced viewer in a status-viewers-update', 10)
    const ms = (q: number): number => latency.percentile(q) / 1000
    log(`paced: ${paced} receipts over ${pacedFor.toFixed(2)} s; latency p50 ${ms(50).toFixed(1)} ms, p99 ${ms(99).toFixed(1)} ms, max ${(latency.max / 1000).toFixed(1)} ms`)

    const figures: Figure[] = [
      {
        id: 'receipts.burst.rate',
        name: `view receipts end to end (${burst.toLocaleString('en-US')} viewers, one status)`,
        value: burst / totalS,
        unit: 'receipts/s',
        target: { op: '>=', value: 5000 },
        note: `all in SQLite after ${((stored - t0) / 1000).toFixed(2)} s, last status-viewers-update after ${((evented - t0) / 1000).toFixed(2)} s; service CPU ${cpuPerReceipt.toFixed(0)} µs per receipt`
      },
      {
        id: 'receipts.paced.p99',
        name: `receipt → status-viewers-update p99 (paced ${pacedRate}/s, ${paced} receipts)`,
        value: ms(99),
        unit: 'ms',
        target: { op: '<', value: 50 },
        note: `p50 ${ms(50).toFixed(1)} ms, p90 ${ms(90).toFixed(1)} ms, max ${(latency.max / 1000).toFixed(1)} ms`
      },
      { id: 'receipts.paced.p50', name: 'receipt → status-viewers-update p50 (paced)', value: ms(50), unit: 'ms' }
    ]
    return figures
  } finally {
    db.close()
    socket.close()
  }
})
