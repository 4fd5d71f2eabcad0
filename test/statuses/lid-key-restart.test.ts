import assert from 'node:assert/strict'
import { test } from 'node:test'
import { serviceApi } from '../support/clients.js'
import { waitFor } from '../helper.js'
import { killableService } from '../durability/killable.js'

// The record of which devices hold the status sender key is stored with the session's keys: after a
// SIGKILL and a restart, a post to the same recipients still carries no SKDM except to a new recipient's
// device, to a device a known recipient linked meanwhile and to the own phone (only those).

const OWN = '4915400000001'
const SID = 'keys'

test('the status sender key and who holds it survive a SIGKILL: the next post sends SKDM only to a new recipient and a new device', { timeout: 170_000 }, async (t) => {
  const { emu, svc, start } = await killableService(t, { tempPrefix: 'st-lid-keys-', sessionId: SID, number: OWN, env: { LOG_LEVEL: 'warn' } })
  const [a, b, c] = emu.addContacts(3, { prefix: '4475' })
  const post = async (base: string, numbers: string[]) => {
    const sent = await serviceApi(base).post<{ platformMessageId: string, state: string }>(`/sessions/${SID}/send-status`, { type: 'text', content: `to ${numbers.length}`, targetNumbers: numbers.join(',') })
    assert.equal(sent.state, 'sent')
    await emu.waitForStatus((s) => s.id === sent.platformMessageId && s.decrypted)
    await emu.settled()
    const record = emu.status(sent.platformMessageId)
    assert.equal(record.rejected, undefined)
    assert.deepEqual(record.errors, [])
    return record
  }
  const first = await post(svc.base, [a.number, b.number])
  assert.deepEqual([...first.skdmDevices].sort(), [`${a.lid}@lid`, `${b.lid}@lid`, `${emu.getAccount(OWN).lid}@lid`].sort())

  // a recipient links another device meanwhile (the restart empties Baileys' device cache, so it is seen)
  emu.addContactDevice(a.number)
  svc.child.kill('SIGKILL')
  await svc.exited
  const again = await start()
  await waitFor(async () => (await serviceApi(again.base).get<{ connected: boolean }>(`/sessions/${SID}/connection-status`)).connected, 60_000, 'the session to reconnect')

  const second = await post(again.base, [a.number, b.number, c.number])
  // and the own phone: the poster's own devices get it on every post (whatsapp-rust #999)
  assert.deepEqual([...second.skdmDevices].sort(), [`${c.lid}@lid`, `${a.lid}:1@lid`, `${emu.getAccount(OWN).lid}@lid`].sort(), 'only the new recipient, the new device and the own phone get the key')
  const decrypted = new Set(second.deliveries.filter((d) => d.decrypted).map((d) => d.number))
  for (const n of [a.number, b.number, c.number, OWN]) assert.ok(decrypted.has(n), `${n} decrypted the second post`)
})
