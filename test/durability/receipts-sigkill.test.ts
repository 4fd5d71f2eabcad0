import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { SQLite as Database } from '../../src/db/sqlite/driver.js'
import { serviceApi } from '../support/clients.js'
import { countMismatches, KEPT_AND_RECOUNTED } from '../support/db.js'
import { sleep } from '../support/wait.js'
import { waitFor } from '../helper.js'
import { killableService } from './killable.js'

// The service as a real process (node --import tsx src/server.ts), real Baileys, the emulator in this
// process. A 5,000-receipt burst is cut by SIGKILL three times, at different points (by how many views
// are committed), and the service restarted on the same DATA_DIR each time. At every kill the emulator
// must have seen no more receipts acked than there are viewer rows; once the service is back and the
// emulator has redelivered everything unacknowledged, every viewer is stored exactly once. Every status's
// kept counts (migration 019: committed with the rows) equal a recount at each kill and in the end.

const OWN = '15557000001'
const SID = 'durable'
const BURST = 5000
const KILL_AT = [600, 2200, 4000]

test('SIGKILL during a 5,000-receipt burst: nothing acknowledged is lost, nothing is stored twice', { timeout: 170_000 }, async (t) => {
  const k = await killableService(t, { tempPrefix: 'st-sigkill-', sessionId: SID, number: OWN, env: { LOG_LEVEL: 'warn' } })
  const { emu, start, api } = k
  let svc = k.svc

  const contacts = emu.addContacts(BURST, { prefix: '4473' }).map((c) => c.number)
  const status = await api.post<{ statusId: string, platformMessageId: string }>(`/sessions/${SID}/send-status`, { type: 'text', content: 'burst', targetNumbers: contacts.slice(0, 3).join(',') })
  await emu.waitForStatus((s) => s.id === status.platformMessageId && s.decrypted)
  await emu.settled()

  const db = new Database(join(svc.dataDir, 'status-tracker.db'), { readonly: true, fileMustExist: true })
  t.after(() => { db.close() })
  const rows = db.prepare<[number], number>('select count(*) from viewers where status_id = ?').pluck()
  const committed = (): number => rows.get(Number(status.statusId)) ?? 0
  const acked = (): number => emu.ackStats(OWN).reduce((n, c) => n + c.acked, 0)
  const counts = db.prepare(KEPT_AND_RECOUNTED)
  const ackedBefore = acked()
  assert.equal(emu.unackedCount(OWN), 0)

  const t0 = performance.now()
  await emu.sendViews(status.platformMessageId, { viewers: contacts, force: true })
  for (const threshold of KILL_AT) {
    // kill once this many views are committed (polled every few ms), i.e. in the middle of the burst
    await waitFor(() => committed() >= threshold, 60_000, `${threshold} views committed`)
    svc.child.kill('SIGKILL')
    await svc.exited
    // the emulator has read everything the killed process wrote once it saw the connection close
    await waitFor(() => emu.ackStats(OWN).every((c) => !c.connected), 10_000, 'the emulator to see the connection closed')
    const ackedReceipts = acked() - ackedBefore
    const stored = committed()
    t.diagnostic(`SIGKILL at ${((performance.now() - t0) / 1000).toFixed(2)} s: ${stored} views committed, ${ackedReceipts} receipts acked, ${emu.unackedCount(OWN)} unacked`)
    assert.ok(stored < BURST, `the kill came before the burst was over (${stored})`)
    assert.ok(ackedReceipts <= stored, `acked but not stored: ${ackedReceipts - stored}`)
    assert.deepEqual(countMismatches(counts.all()), [], 'the kept counts equal a recount of what the kill left')
    svc = await start()
  }

  await waitFor(() => emu.unackedCount(OWN) === 0 && committed() === BURST, 90_000, 'every receipt redelivered, committed and acked')
  t.diagnostic(`all ${BURST} stored and acked ${((performance.now() - t0) / 1000).toFixed(1)} s after the burst began`)
  await sleep(200)
  const check = db.prepare<[number], { n: number, numbers: number, lids: number }>(
    'select count(*) as n, count(distinct number) as numbers, sum(number is null) as lids from viewers where status_id = ?')
  assert.deepEqual(check.get(Number(status.statusId)), { n: BURST, numbers: BURST, lids: 0 })
  assert.equal(acked() - ackedBefore, BURST, 'each receipt acked once in the end')
  assert.deepEqual(countMismatches(counts.all()), [], 'the kept counts equal a recount after the restarts')
  const listed = await serviceApi(svc.base).get<Array<{ id: string, viewerCount: number }>>(`/sessions/${SID}/sent-statuses`)
  assert.equal(listed.find((s) => s.id === status.statusId)?.viewerCount, BURST, 'the list reads the kept count')
  const viewers = await serviceApi(svc.base).get<Array<{ number: string }>>(`/sessions/${SID}/status-viewers/${status.statusId}`)
  assert.deepEqual(viewers.map((v) => v.number).sort(), [...contacts].sort())
  await svc.stop()
  const rw = new Database(join(svc.dataDir, 'status-tracker.db'))
  try {
    assert.equal(rw.pragma('integrity_check', { simple: true }), 'ok')
  } finally {
    rw.close()
  }
})
