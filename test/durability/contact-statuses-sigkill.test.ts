import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { SQLite as Database } from '../../src/db/sqlite/driver.js'
import { waitFor } from '../helper.js'
import { killableService } from './killable.js'

// Contacts' statuses are committed before their <status> stanza is acked (src/platform/contact-statuses.ts). The
// service as a real process gets a stream of contacts' statuses and is SIGKILLed twice in the middle of it: at each
// kill the emulator must have seen no more of them acked than there are rows. After the restarts the platform has
// redelivered everything unacked: every status is stored exactly once, with its text.

const OWN = '15557200001'
const SID = 'watching'
const POSTS = 80
const KILL_AT = [15, 45]

test("SIGKILL while contacts' statuses stream in: nothing acked is lost, nothing is stored twice", { timeout: 170_000 }, async (t) => {
  const k = await killableService(t, { tempPrefix: 'st-contact-status-kill-', sessionId: SID, number: OWN })
  const { emu, start } = k
  let svc = k.svc
  const contacts = emu.addContacts(POSTS, { prefix: '4476' }).map((c) => c.number)
  const db = new Database(join(svc.dataDir, 'status-tracker.db'), { readonly: true, fileMustExist: true })
  t.after(() => { db.close() })
  const rows = db.prepare<[string], number>('select count(*) from contact_statuses where session_id = ?').pluck()
  const committed = (): number => rows.get(SID) ?? 0
  const acked = (): number => emu.contactStatusLog(OWN).statuses.filter((s) => s.deliveries.some((d) => d.acked)).length

  // one status per contact, one every 60 ms, in the background: they keep coming across the kills and restarts
  const ids: string[] = []
  const stream = (async () => {
    for (const [i, from] of contacts.entries()) {
      ids.push((await emu.postContactStatus(OWN, { from, text: `status ${i}` })).id)
      await new Promise((resolve) => setTimeout(resolve, 60))
    }
  })()
  for (const threshold of KILL_AT) {
    await waitFor(() => committed() >= threshold, 60_000, `${threshold} statuses committed`)
    svc.child.kill('SIGKILL')
    await svc.exited
    await waitFor(() => emu.ackStats(OWN).every((c) => !c.connected), 10_000, 'the emulator to see the connection closed')
    const stored = committed()
    const ackedNow = acked()
    t.diagnostic(`SIGKILL: ${stored} contact statuses committed, ${ackedNow} acked, ${emu.unackedCount(OWN)} unacked`)
    assert.ok(stored < POSTS, `the kill came before every status was stored (${stored})`)
    assert.ok(ackedNow <= stored, `acked but not stored: ${ackedNow - stored}`)
    svc = await start()
  }
  await stream
  await waitFor(() => emu.unackedCount(OWN) === 0 && committed() === POSTS, 90_000, 'every status redelivered, committed and acked')
  const check = db.prepare<[string], { n: number, ids: number, texts: number, unread: number }>(
    "select count(*) as n, count(distinct message_id) as ids, count(distinct text) as texts, sum(case when type <> 'text' then 1 else 0 end) as unread from contact_statuses where session_id = ?")
  assert.deepEqual(check.get(SID), { n: POSTS, ids: POSTS, texts: POSTS, unread: 0 })
  const log = emu.contactStatusLog(OWN)
  assert.deepEqual(log.statuses.map((s) => s.id).sort(), [...ids].sort())
  assert.ok(log.statuses.every((s) => s.deliveries.every((d) => d.acked)), 'every copy acked in the end')
  t.diagnostic(`redelivered at a login: ${log.statuses.filter((s) => s.deliveries.some((d) => d.redelivered > 0)).length}`)
})
