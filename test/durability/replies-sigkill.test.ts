import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { SQLite as Database } from '../../src/db/sqlite/driver.js'
import { serviceApi } from '../support/clients.js'
import { countMismatches, KEPT_AND_RECOUNTED } from '../support/db.js'
import { waitFor } from '../helper.js'
import { killableService } from './killable.js'

// Replies and reactions are committed before their message is acknowledged (src/platform/interactions.ts).
// The service as a real process gets a stream of replies and is SIGKILLed twice in the middle of it: at
// each kill the emulator must have seen no more messages acknowledged than there are reply rows. After the
// restarts the platform has redelivered everything unacknowledged: every reply is stored exactly once, and
// the kept counts (migration 019) equal a recount at each kill and in the end.

const OWN = '15557100001'
const SID = 'answers'
const REPLIES = 240
const KILL_AT = [40, 140]

test('SIGKILL while replies stream in: nothing acknowledged is lost, nothing is stored twice', { timeout: 170_000 }, async (t) => {
  const k = await killableService(t, { tempPrefix: 'st-replies-kill-', sessionId: SID, number: OWN })
  const { emu, start, api } = k
  let svc = k.svc
  const contacts = emu.addContacts(REPLIES, { prefix: '4475' }).map((c) => c.number)
  const status = await api.post<{ statusId: string, platformMessageId: string }>(`/sessions/${SID}/send-status`, { type: 'text', content: 'tell me', targetNumbers: contacts.join(',') })
  await emu.waitForStatus((s) => s.id === status.platformMessageId && s.decrypted && s.recipients.length === REPLIES + 1)
  await emu.settled()

  const db = new Database(join(svc.dataDir, 'status-tracker.db'), { readonly: true, fileMustExist: true })
  t.after(() => { db.close() })
  const rows = db.prepare<[number], number>('select count(*) from status_replies where status_id = ?').pluck()
  const committed = (): number => rows.get(Number(status.statusId)) ?? 0
  const acked = (): number => emu.ackStats(OWN).reduce((n, c) => n + c.acked - c.nacked, 0)
  const counts = db.prepare(KEPT_AND_RECOUNTED)
  const ackedBefore = acked()
  assert.equal(emu.unackedCount(OWN), 0)

  // one reply per contact, one after another, in the background: they keep coming across the kills
  const t0 = performance.now()
  const stream = (async () => {
    for (const [i, from] of contacts.entries()) await emu.reply(status.platformMessageId, { from, text: `reply ${i}` })
  })()
  for (const threshold of KILL_AT) {
    await waitFor(() => committed() >= threshold, 60_000, `${threshold} replies committed`)
    svc.child.kill('SIGKILL')
    await svc.exited
    await waitFor(() => emu.ackStats(OWN).every((c) => !c.connected), 10_000, 'the emulator to see the connection closed')
    const ackedMessages = acked() - ackedBefore
    const stored = committed()
    t.diagnostic(`SIGKILL: ${stored} replies committed, ${ackedMessages} acknowledged, ${emu.unackedCount(OWN)} unacked`)
    assert.ok(stored < REPLIES, `the kill came before the stream was over (${stored})`)
    assert.ok(ackedMessages <= stored, `acknowledged but not stored: ${ackedMessages - stored}`)
    assert.deepEqual(countMismatches(counts.all()), [], 'the kept counts equal a recount of what the kill left')
    svc = await start()
  }
  await stream
  await waitFor(() => emu.unackedCount(OWN) === 0 && committed() === REPLIES, 90_000, 'every reply redelivered, committed and acked')
  t.diagnostic(`all ${REPLIES} replies stored and acked ${((performance.now() - t0) / 1000).toFixed(1)} s after the first was sent (two kills and restarts included)`)
  const check = db.prepare<[number], { n: number, numbers: number, texts: number }>(
    'select count(*) as n, count(distinct number) as numbers, count(distinct text) as texts from status_replies where status_id = ?')
  assert.deepEqual(check.get(Number(status.statusId)), { n: REPLIES, numbers: REPLIES, texts: REPLIES })
  assert.deepEqual(countMismatches(counts.all()), [], 'the kept counts equal a recount after the restarts')
  const listed = await serviceApi(svc.base).get<Array<{ number: string }>>(`/sessions/${SID}/status-replies/${status.statusId}`)
  assert.deepEqual(listed.map((r) => r.number).sort(), [...contacts].sort())
})
