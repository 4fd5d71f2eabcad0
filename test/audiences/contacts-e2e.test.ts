import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { StatusRecord } from '@status-tracker/emulator'
import { waitFor } from '../helper.js'
import { startStack, type Stack } from '../stack.js'

// Issue 24's "done when" for audiences, from the emulated phone to the emulator's record: the phone's saved
// contacts and status privacy, set through the emulator's control API, reach the service through real
// Baileys (app-state sync, the privacy query); `contacts` except two reaches exactly the saved contacts less
// those two with status_setting denylist, and `phone` follows each privacy change made on the phone.

const OWN = '4915600000001'
const [A, B, C, D, E, F] = ['11', '12', '13', '14', '15', '16'].map((n) => `49156000000${n}`)
const SID = 'phone-aud'

interface Snapshot { type: string, except: string[] | null, mode: string | null, statusSetting: string, recipients: string[] }

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

async function send (s: Stack, audience: Record<string, unknown>, content: string): Promise<{ statusId: string, platformMessageId: string }> {
  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content, audience } })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: { statusId: string, platformMessageId: string } }>().data
}

/** The post's record once read, with its audience exactly the own LID and these, each stanza with this setting, read by exactly them. */
async function reached (s: Stack, id: string, recipients: string[], setting: string): Promise<StatusRecord> {
  await s.emu.waitForStatus((r) => r.id === id && r.decrypted, 15_000)
  await s.emu.settled()
  const record = s.emu.status(id)
  const lidOf = (n: string): string => `${n === OWN ? s.emu.getAccount(n).lid : s.emu.getContact(n).lid}@lid`
  assert.equal(record.rejected, undefined, JSON.stringify(record.rejected))
  assert.deepEqual(record.stanzas.map((st) => st.statusSetting), record.stanzas.map(() => setting))
  assert.equal(record.statusSetting, setting)
  assert.deepEqual([...record.audience].sort(), [OWN, ...recipients].map(lidOf).sort())
  const decrypted = new Set(record.deliveries.filter((d) => d.decrypted).map((d) => d.number))
  assert.deepEqual([...decrypted].sort(), [OWN, ...recipients].sort())
  return record
}

test("audiences from the emulated phone's contacts and status privacy", { timeout: 120_000 }, async (t) => {
  const s = await startStack(t, { RATE_LIMIT_MAX: '1000000' })
  const put = async (path: string, body: unknown): Promise<void> => {
    const res = await fetch(`${s.emu.controlUrl}/accounts/${OWN}/${path}`, { method: 'PUT', body: JSON.stringify(body) })
    assert.equal(res.status, 200, await res.text())
  }
  for (const number of [A, B, C, D, E, F]) s.emu.addContact({ number })
  await s.link(SID, OWN)
  // F is on WhatsApp but not in the phone's address book
  await put('saved-contacts', { contacts: [A, B, C, D, E].map((number, i) => ({ number, name: `Contact ${i + 1}` })) })
  await waitFor(async () => (await s.app.contacts.savedNumbers(SID)).length === 5, 20_000, 'the saved contacts synced')

  await t.test('contacts except two: exactly the other saved contacts, status_setting denylist', async () => {
    const sent = await send(s, { type: 'contacts', except: [B, D] }, 'to my contacts except two')
    await reached(s, sent.platformMessageId, [A, C, E], 'denylist')
    const list = await s.api({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })
    const audience = list.json<{ data: Array<{ id: string, audience: Snapshot | null }> }>().data.find((x) => x.id === sent.statusId)?.audience
    assert.deepEqual([audience?.type, audience?.except, audience?.statusSetting, audience?.recipients], ['contacts', [B, D], 'denylist', [A, C, E]])
    // without except: every saved contact, status_setting contacts
    const all = await send(s, { type: 'contacts' }, 'to all my contacts')
    await reached(s, all.platformMessageId, [A, B, C, D, E], 'contacts')
  })

  await t.test('phone: follows each status privacy change made on the phone', async () => {
    const follow = async (privacy: { mode: string, numbers?: string[] }, recipients: string[]): Promise<void> => {
      await put('status-privacy', privacy)
      const expected = { mode: privacy.mode, numbers: privacy.numbers ?? [] }
      await waitFor(async () => same(await s.app.contacts.statusPrivacy(SID), expected), 20_000, `the privacy ${privacy.mode} synced`)
      const sent = await send(s, { type: 'phone' }, `as the phone says: ${privacy.mode}`)
      const record = await reached(s, sent.platformMessageId, recipients, privacy.mode)
      assert.equal(record.statusSetting, privacy.mode)
    }
    // only share with A and F (F is not a saved contact: the list is what counts)
    await follow({ mode: 'allowlist', numbers: [A, F] }, [A, F])
    // my contacts except A
    await follow({ mode: 'denylist', numbers: [A] }, [B, C, D, E])
    // my contacts
    await follow({ mode: 'contacts' }, [A, B, C, D, E])
    assert.deepEqual(s.emu.rejectedMessages(), [])
  })
})
