import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
// the driver the service picks for this Node (better-sqlite3 12 aborts Node 24.19+ when it is collected)
import { SQLite } from '../../src/db/sqlite/driver.js'
import { startEmulator, testCertPaths } from '@status-tracker/emulator'
import { connectSocket, emulatorApi, linkSessions, serviceApi } from '../support/clients.js'
import { tempDir } from '../support/processes.js'
import { API_KEY, spawnService, type ServiceProc } from '../support/service.js'
import { waitFor } from '../support/wait.js'

// Issue 11, the send half, with the service as a real child process (spawnService) and the emulator
// in this process: SIGKILL in the middle of a 1,000-recipient send, then a restart on the same DATA_DIR.
// The row must never stay `sending`: it is resumed (same id, remaining recipients, each once; only the
// chunk in flight at the kill may arrive twice) or, when its session does not come back within
// SEND_RECONNECT_WAIT_MS, ends `partial` with the acknowledged recipients counted and the chunk in flight
// kept as "may have it", and a revoke reaches all of them.

const OWN = '4915300000001'
const SID = 'crashy'
const NO_PLATFORM = 'ws://127.0.0.1:9/ws/chat'

interface Listed { id: string, state: string, sentCount: number, contactCount: number, platformMessageId: string, error: string | null }

/** The newest status row and the numbers recorded for it, read from the database file of a stopped service. */
function readRecord (dataDir: string): { id: number, messageId: string, state: string, confirmed: string[], all: string[] } {
  const db = new SQLite(join(dataDir, 'status-tracker.db'))
  try {
    const row = db.prepare('select id, message_id as messageId, state from statuses order by id desc limit 1').get() as { id: number, messageId: string, state: string }
    const jids = db.prepare('select jid, confirmed from status_recipients where status_id = ?').all(row.id) as Array<{ jid: string, confirmed: number }>
    const digits = (rows: typeof jids): string[] => rows.map((r) => r.jid.replace(/@s\.whatsapp\.net$/, '')).sort()
    return { ...row, confirmed: digits(jids.filter((j) => j.confirmed === 1)), all: digits(jids) }
  } finally {
    db.close()
  }
}

test('SIGKILL during a 1,000-recipient send: after a restart the row is resumed to sent, or ends partial with its acknowledged recipients (the chunk in flight kept as may-have-it) and revocable', { timeout: 330_000 }, async (t) => {
  const emu = await startEmulator({ tls: testCertPaths() })
  t.after(async () => { await emu.stop() })
  const work = tempDir('st-send-crash-')
  t.after(() => { work.rm() })
  const procs: ServiceProc[] = []
  t.after(async () => { await Promise.all(procs.map(async (p) => await p.stop(2000))) })
  const start = async (name: string, env: Record<string, string> = {}): Promise<ServiceProc> => {
    const proc = await spawnService({ dir: work.path, name, emulator: { wsUrl: emu.wsUrl, rootPublicKey: emu.rootPublicKey, caFile: emu.caFile }, env: { STATUS_CHUNK_SIZE: '100', ...env } })
    procs.push(proc)
    return proc
  }

  let svc = await start('first')
  await linkSessions(serviceApi(svc.base), emulatorApi(emu.controlUrl), [{ sessionId: SID, number: OWN }])
  const contacts = emu.addContacts(1000, { prefix: '4475' }).map((c) => c.number)
  const listed = async (base: string): Promise<Listed[]> => await serviceApi(base).get<Listed[]>(`/sessions/${SID}/sent-statuses`)

  /**
   * Posts a status to every contact and SIGKILLs the service right after a progress event past `atSent`.
   * `wait: false`: the request was answered 202 before the kill (issue 14); otherwise it never is.
   */
  const killDuring = async (content: string, atSent: number, wait = true): Promise<ReturnType<typeof readRecord>> => {
    const socket = await connectSocket(svc.base)
    const victim = svc
    const killed = new Promise<number>((resolve) => {
      socket.on('status-send-progress', (p: { sent: number }) => {
        if (p.sent >= atSent && victim.child.exitCode === null && victim.child.signalCode === null) { victim.child.kill('SIGKILL'); resolve(p.sent) }
      })
    })
    const answer = fetch(`${svc.base}/api/sessions/${SID}/send-status`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'text', content, targetNumbers: contacts.join(','), ...(wait ? {} : { wait: false }) })
    }).then((res) => `HTTP ${res.status}`, () => 'no answer')
    const at = await Promise.race([killed, victim.exited.then(() => -1)])
    await victim.exited
    socket.close()
    assert.ok(at >= atSent, `killed at ${at}`)
    assert.equal(await answer, wait ? 'no answer' : 'HTTP 202')
    await emu.settled(30_000)
    const record = readRecord(victim.dataDir)
    assert.equal(record.state, 'sending', 'a crash leaves the row sending')
    // every acknowledged chunk is committed; the chunk in flight was recorded as "may have it" before it
    // went out, so what the emulator received lies between the two (usually equal to the confirmed ones)
    const received = [...emu.status(record.messageId).recipients].sort()
    const inFlight = record.all.filter((n) => !record.confirmed.includes(n))
    assert.ok(record.confirmed.every((n) => received.includes(n)), 'every confirmed recipient has it')
    assert.ok(received.every((n) => record.all.includes(n)), 'nobody who has it is missing from the record')
    assert.ok(inFlight.length <= 100, `at most one chunk in flight (${inFlight.length})`)
    assert.ok(record.confirmed.length >= atSent && record.confirmed.length < 1001, `${record.confirmed.length} recorded`)
    t.diagnostic(`killed with ${record.confirmed.length} confirmed, ${inFlight.length} in flight, ${received.length} received`)
    return record
  }

  await t.test('killed mid-send, restarted: resumed under the same id, every recipient has it exactly once, row sent', async () => {
    const before = await killDuring('survives a SIGKILL', 300)
    const started = Date.now()
    svc = await start('second')
    const row = await waitFor(async () => (await listed(svc.base)).find((r) => r.id === String(before.id) && r.state !== 'sending'), 90_000, 'the interrupted send to end')
    t.diagnostic(`resumed from ${before.confirmed.length} of 1001 in ${Date.now() - started} ms after the restart`)
    assert.deepEqual([row.state, row.sentCount, row.contactCount, row.platformMessageId], ['sent', 1000, 1000, before.messageId])
    await emu.settled(30_000)
    const record = emu.status(before.messageId)
    // only the chunk in flight at the kill may have been sent twice (phones drop a repeated message id)
    const inFlight = before.all.filter((n) => !before.confirmed.includes(n))
    assert.ok(record.duplicateRecipients.every((n) => inFlight.includes(n)), `duplicates outside the chunk in flight: ${record.duplicateRecipients.join(',')}`)
    assert.equal(record.recipients.length, 1001)
    assert.deepEqual([...record.recipients].sort(), [OWN, ...contacts].sort())
    assert.deepEqual(record.errors, [])
  })

  await t.test('killed mid-send, restarted without its platform: partial after the bound, listed and counted; revoke reaches exactly those recipients', async () => {
    const before = await killDuring('cut short by a SIGKILL', 300)
    // the session cannot reconnect: the interrupted send is not resumed within SEND_RECONNECT_WAIT_MS
    svc = await start('third', { WA_WEBSOCKET_URL: NO_PLATFORM, SEND_RECONNECT_WAIT_MS: '1500' })
    const row = await waitFor(async () => (await listed(svc.base)).find((r) => r.id === String(before.id) && r.state !== 'sending'), 30_000, 'the bound')
    assert.equal(row.state, 'partial')
    assert.equal(row.sentCount, before.confirmed.length - 1, 'sentCount: the acknowledged contacts')
    assert.match(row.error ?? '', /did not reconnect within 2 s/)
    const stats = await serviceApi(svc.base).get<{ totalStatuses: number }>('/stats')
    assert.equal(stats.totalStatuses, (await listed(svc.base)).length, '/api/stats counts what sent-statuses lists')
    await svc.stop()

    svc = await start('fourth')
    await waitFor(async () => (await serviceApi(svc.base).get<{ connected: boolean }>(`/sessions/${SID}/connection-status`)).connected, 60_000, 'reconnected')
    const deleted = await serviceApi(svc.base).call<{ deletedFromPlatform: boolean }>('DELETE', `/sessions/${SID}/delete-status/${before.id}?revoke=true`)
    assert.equal(deleted.deletedFromPlatform, true)
    // the revoke goes to every recorded recipient: the confirmed ones and the chunk that was in flight
    const have = [...emu.status(before.messageId).recipients].sort()
    const revoked = await waitFor(async () => { const r = emu.status(before.messageId); return (r.revokedFor?.length ?? 0) >= before.all.length ? r : undefined }, 30_000, 'the revoke')
    const revokedFor = [...(revoked.revokedFor ?? [])].sort()
    assert.deepEqual(revokedFor, before.all)
    assert.ok(have.every((n) => revokedFor.includes(n)), 'the revoke reached everyone who has it')
  })

  await t.test('answered 202 (wait: false), killed mid-send in the background, restarted: resumed under the same id to sent', async () => {
    const before = await killDuring('sent in the background, survives a SIGKILL', 300, false)
    svc = await start('fifth')
    const row = await waitFor(async () => (await listed(svc.base)).find((r) => r.id === String(before.id) && r.state !== 'sending'), 90_000, 'the interrupted background send to end')
    assert.deepEqual([row.state, row.sentCount, row.contactCount, row.platformMessageId], ['sent', 1000, 1000, before.messageId])
    await emu.settled(30_000)
    const record = emu.status(before.messageId)
    assert.deepEqual([...record.recipients].sort(), [OWN, ...contacts].sort())
    assert.deepEqual(record.errors, [])
  })
})
