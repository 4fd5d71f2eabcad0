import assert from 'node:assert/strict'
import { test } from 'node:test'
import { serviceApi } from '../support/clients.js'
import { waitFor } from '../helper.js'
import { killableService } from '../durability/killable.js'

// A retry receipt that reaches the service after a SIGKILL and a restart (a device that read the status late):
// the status is no longer in memory, so it is answered from the message the service stored for it
// (statuses.message_payload), the WA Web way (docs/platform.md "Status retry receipts"), and the device's view
// is recorded.

const OWN = '4915400000101'
const SID = 'late-retry'

test('a status retry arriving after a restart is answered from the stored message; the device reads it and its view is recorded', { timeout: 170_000 }, async (t) => {
  const { emu, svc, start } = await killableService(t, { tempPrefix: 'st-retry-', sessionId: SID, number: OWN, env: { LOG_LEVEL: 'warn' } })
  const [a] = emu.addContacts(1, { prefix: '4476', devices: 2 })
  const sent = await serviceApi(svc.base).post<{ platformMessageId: string, statusId: string, state: string }>(`/sessions/${SID}/send-status`, { type: 'text', content: 'read me later', targetNumbers: a.number })
  assert.equal(sent.state, 'sent')
  await emu.waitForStatus((s) => s.id === sent.platformMessageId && s.decrypted)
  await emu.settled()

  svc.child.kill('SIGKILL')
  await svc.exited
  // a's second device asks for it while the service is down: the receipt waits for the next login
  emu.requestStatusRetry(sent.platformMessageId, { number: a.number, device: 1 })
  const again = await start()
  const record = await emu.waitForStatus((s) => s.id === sent.platformMessageId && s.retries.length === 1 && s.retries[0].answered, 60_000)
  const [retry] = record.retries
  assert.deepEqual([retry.answeredTo, retry.skdm, retry.decrypted, retry.violations], ['status@broadcast', true, true, []])
  await waitFor(() => emu.unackedCount(OWN) === 0 || undefined, 10_000, 'the retry receipt acknowledged')

  await emu.sendView(sent.platformMessageId, { viewer: a.number })
  const api = serviceApi(again.base)
  await waitFor(async () => (await api.get<Array<{ number: string | null }>>(`/sessions/${SID}/status-viewers/${sent.statusId}`)).some((v) => v.number === a.number), 15_000, 'the view recorded')
})
