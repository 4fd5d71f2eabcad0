import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { serviceApi } from '../support/clients.js'
import { countMismatches, KEPT_AND_RECOUNTED } from '../support/db.js'
import { sleep } from '../support/wait.js'
import { waitFor } from '../helper.js'
import { killableService } from './killable.js'
import { postgresUrl, usePostgres } from '../support/db-matrix.js'

// receipts-sigkill.test.ts on PostgreSQL (DATABASE_URL): the service as a real process, a receipt burst
// cut by SIGKILL twice; at every kill no more receipts are acked than there are viewer rows (a stanza's
// ack waits for its commit), and in the end every viewer is stored exactly once; the kept counts
// (migration 019) equal a recount at each kill and in the end.

const OWN = '15557000101'
const SID = 'durable-pg'
const BURST = 2000
const KILL_AT = [300, 1200]
usePostgres()

test('on PostgreSQL, SIGKILL during a receipt burst: nothing acknowledged is lost, nothing is stored twice', { timeout: 170_000 }, async (t) => {
  const url = await postgresUrl()
  const k = await killableService(t, { tempPrefix: 'st-sigkill-pg-', sessionId: SID, number: OWN, env: { LOG_LEVEL: 'warn', DATABASE_URL: url } })
  const { emu, start, api } = k
  let svc = k.svc

  const contacts = emu.addContacts(BURST, { prefix: '4474' }).map((c) => c.number)
  const status = await api.post<{ statusId: string, platformMessageId: string }>(`/sessions/${SID}/send-status`, { type: 'text', content: 'burst', targetNumbers: contacts.slice(0, 3).join(',') })
  await emu.waitForStatus((s) => s.id === status.platformMessageId && s.decrypted)
  await emu.settled()

  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.after(async () => { await client.end() })
  const committed = async (): Promise<number> =>
    (await client.query<{ n: number }>('select count(*)::int as n from viewers where status_id = $1', [Number(status.statusId)])).rows[0].n
  const acked = (): number => emu.ackStats(OWN).reduce((n, c) => n + c.acked, 0)
  const mismatches = async (): Promise<string[]> => countMismatches((await client.query(KEPT_AND_RECOUNTED)).rows)
  const ackedBefore = acked()
  assert.equal(emu.unackedCount(OWN), 0)

  // in slices: receipts arriving together are committed together, and one burst in one read would be
  // committed (on PostgreSQL, quickly) before any kill could land in its middle
  const sending = (async () => {
    // 25 every 50 ms, and only while the service is connected: a restart that outlasts the stream (a
    // loaded machine) would otherwise get the rest of the burst queued and commit it at once, before the
    // next kill could land in it
    for (let i = 0; i < BURST; i += 25) {
      await waitFor(() => emu.ackStats(OWN).some((c) => c.connected), 60_000, 'the service connected')
      await emu.sendViews(status.platformMessageId, { viewers: contacts.slice(i, i + 25), force: true })
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })()
  for (const threshold of KILL_AT) {
    await waitFor(async () => await committed() >= threshold, 60_000, `${threshold} views committed`)
    svc.child.kill('SIGKILL')
    await svc.exited
    await waitFor(() => emu.ackStats(OWN).every((c) => !c.connected), 10_000, 'the emulator to see the connection closed')
    const ackedReceipts = acked() - ackedBefore
    // a transaction the kill cut short is rolled back by the server once it sees the connection gone
    await sleep(300)
    const stored = await committed()
    t.diagnostic(`SIGKILL: ${stored} views committed, ${ackedReceipts} receipts acked, ${emu.unackedCount(OWN)} unacked`)
    assert.ok(stored < BURST, `the kill came before the burst was over (${stored})`)
    assert.ok(ackedReceipts <= stored, `acked but not stored: ${ackedReceipts - stored}`)
    assert.deepEqual(await mismatches(), [], 'the kept counts equal a recount of what the kill left')
    svc = await start()
  }

  await sending
  await waitFor(async () => emu.unackedCount(OWN) === 0 && await committed() === BURST, 90_000, 'every receipt redelivered, committed and acked')
  await sleep(200)
  const check = await client.query<{ n: number, numbers: number, lids: number }>(
    'select count(*)::int as n, count(distinct number)::int as numbers, count(*) filter (where number is null)::int as lids from viewers where status_id = $1',
    [Number(status.statusId)])
  assert.deepEqual(check.rows[0], { n: BURST, numbers: BURST, lids: 0 })
  assert.equal(acked() - ackedBefore, BURST, 'each receipt acked once in the end')
  assert.deepEqual(await mismatches(), [], 'the kept counts equal a recount after the restarts')
  const listed = await serviceApi(svc.base).get<Array<{ id: string, viewerCount: number }>>(`/sessions/${SID}/sent-statuses`)
  assert.equal(listed.find((s) => s.id === status.statusId)?.viewerCount, BURST, 'the list reads the kept count')
  const viewers = await serviceApi(svc.base).get<Array<{ number: string }>>(`/sessions/${SID}/status-viewers/${status.statusId}`)
  assert.deepEqual(viewers.map((v) => v.number).sort(), [...contacts].sort())
})
