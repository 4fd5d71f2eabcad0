import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { StatusRecord } from '@status-tracker/emulator'
import { waitFor } from '../helper.js'
import { settledPost, startStack, type Stack } from '../stack.js'

// send-status `audience` through the HTTP API, real Baileys and the emulator (issue 24): a list and a saved
// audience reach exactly their recipients with status_setting allowlist, and the status keeps the snapshot
// (sent-statuses, the report). The phone's contacts (a LID-only one included) less two go out as a
// denylist; `phone` follows the stored status privacy. A contact known only by its LID is posted to by its
// LID. (The contacts reach the store here the way the platform hands them over; from the emulated phone
// through app-state sync: contacts-e2e.test.ts.) A schedule resolves its saved audience at each run; one deleted before the run fails it.

const OWN = '4915400000001'
const LEGACY = '4915400000002'
const A = '4915400000011'
const B = '4915400000012'
const C = '4915400000013'
const D = '4915400000014'
const SID = 'aud'

interface Snapshot {
  type: string
  audienceId: string | null
  name: string | null
  except: string[] | null
  mode: string | null
  statusSetting: string
  recipients: string[]
}
interface Listed { id: string, platformMessageId: string, targetNumbers: string, contactCount: number, audience: Snapshot | null }

const lidOf = (s: Stack, number: string): string => `${number === OWN ? s.emu.getAccount(number).lid : s.emu.getContact(number).lid}@lid`

async function send (
  s: Stack, body: Record<string, unknown>
): Promise<{ statusId: string, platformMessageId: string, contactCount: number, state: string, sentCount: number }> {
  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: body })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: { statusId: string, platformMessageId: string, contactCount: number, state: string, sentCount: number } }>().data
}

async function listed (s: Stack, statusId: string): Promise<Listed> {
  const res = await s.api({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })
  const item = res.json<{ data: Listed[] }>().data.find((x) => x.id === statusId)
  assert.ok(item !== undefined, `status ${statusId} is listed`)
  return item
}

/** Accepted, every stanza with this status_setting, the audience exactly the own LID and these, each of them decrypted it and nobody else. */
function assertReached (s: Stack, record: StatusRecord, recipients: string[], setting: string): void {
  assert.equal(record.rejected, undefined, JSON.stringify(record.rejected))
  assert.deepEqual(record.errors, [])
  for (const stanza of record.stanzas) assert.equal(stanza.statusSetting, setting)
  assert.equal(record.statusSetting, setting)
  assert.deepEqual([...record.audience].sort(), [OWN, ...recipients].map((n) => lidOf(s, n)).sort())
  const decrypted = new Set(record.deliveries.filter((d) => d.decrypted).map((d) => d.number))
  assert.deepEqual([...decrypted].sort(), [OWN, ...recipients].sort(), 'exactly the recipients (and the own phone) decrypted it')
}

test('audiences through real Baileys and the emulator', { timeout: 200_000 }, async (t) => {
  const s = await startStack(t, { SCHEDULE_ALLOW_SECONDS: 'true', RATE_LIMIT_MAX: '1000000' }, { autoCreateContacts: false })
  for (const number of [A, B, C, D]) s.emu.addContact({ number })
  await s.link(SID, OWN)

  await t.test('list: exactly those recipients, allowlist; the snapshot on the status and in its report', async () => {
    const sent = await send(s, { type: 'text', content: 'to a list', audience: { type: 'list', numbers: [A, ` ${B}`, A, OWN] } })
    assert.deepEqual([sent.state, sent.contactCount, sent.sentCount], ['sent', 2, 2])
    assertReached(s, await settledPost(s, sent.platformMessageId), [A, B], 'allowlist')
    const item = await listed(s, sent.statusId)
    assert.equal(item.targetNumbers, '')
    assert.deepEqual(item.audience, { type: 'list', audienceId: null, name: null, except: null, mode: null, statusSetting: 'allowlist', recipients: [A, B] })
    const report = await s.api({ method: 'GET', url: `/api/sessions/${SID}/statuses/${sent.statusId}/report` })
    assert.deepEqual(report.json<{ data: { recipients: Array<{ number: string }> } }>().data.recipients.map((r) => r.number), [A, B])
    // without an audience nothing changed: targetNumbers, no snapshot
    const plain = await send(s, { type: 'text', content: 'to numbers', targetNumbers: C })
    assertReached(s, await settledPost(s, plain.platformMessageId), [C], 'allowlist')
    assert.deepEqual([(await listed(s, plain.statusId)).targetNumbers, (await listed(s, plain.statusId)).audience], [C, null])
  })

  await t.test('saved: its numbers, allowlist; the snapshot stays as it was sent when the audience changes', async () => {
    const made = await s.api({ method: 'POST', url: `/api/sessions/${SID}/audiences`, payload: { name: 'Regulars', numbers: [B, C] } })
    const audienceId = made.json<{ data: { id: string } }>().data.id
    const sent = await send(s, { type: 'text', content: 'to the regulars', audience: { type: 'saved', audienceId } })
    assertReached(s, await settledPost(s, sent.platformMessageId), [B, C], 'allowlist')
    const put = await s.api({ method: 'PUT', url: `/api/sessions/${SID}/audiences/${audienceId}`, payload: { name: 'Others', numbers: [D] } })
    assert.equal(put.statusCode, 200, put.body)
    assert.deepEqual((await listed(s, sent.statusId)).audience,
      { type: 'saved', audienceId, name: 'Regulars', except: null, mode: null, statusSetting: 'allowlist', recipients: [B, C] })
  })

  await t.test('a contact known only by its LID is posted to by its LID, with the status_setting asked for; the revoke reaches it', async () => {
    const platform = s.app.platform
    const messageId = platform.newMessageId(SID)
    const lidOnly = lidOf(s, D)
    const result = await platform.sendStatus(SID, { messageId, content: { kind: 'text', text: 'by LID' }, recipients: [lidOnly, A], statusSetting: 'denylist' })
    assert.deepEqual(result.unreachable, [])
    assert.ok(result.recipientJids.includes(lidOnly), 'the LID is what the caller commits and revokes')
    const record = await settledPost(s, messageId)
    assertReached(s, record, [D, A], 'denylist')
    assert.equal(await platform.revokeStatus(SID, messageId, result.recipientJids), true)
    await s.emu.settled()
    assert.deepEqual([...(s.emu.status(messageId).revokedFor ?? [])].sort(), [OWN, A, D].sort())
    assert.deepEqual(s.emu.rejectedMessages(), [])
  })

  await t.test('contacts (as the platform hands them to the contacts store), a LID-only one included: except two, denylist; phone follows the stored privacy', async () => {
    const sink = s.app.contacts.sink
    // D is known to the phone by its LID only
    await sink.contactsReplaced(SID, [
      ...[A, B, C].map((n) => ({ jid: `${n}@s.whatsapp.net`, number: n, lid: lidOf(s, n), name: n })),
      { jid: lidOf(s, D), number: null, lid: lidOf(s, D), name: 'D by LID' }
    ])
    const sent = await send(s, { type: 'text', content: 'to my contacts but two', audience: { type: 'contacts', except: [B, lidOf(s, A)] } })
    assert.deepEqual([sent.state, sent.contactCount], ['sent', 2])
    assertReached(s, await settledPost(s, sent.platformMessageId), [C, D], 'denylist')
    assert.deepEqual((await listed(s, sent.statusId)).audience,
      { type: 'contacts', audienceId: null, name: null, except: [B, lidOf(s, A)], mode: null, statusSetting: 'denylist', recipients: [C, lidOf(s, D)] })
    const report = await s.api({ method: 'GET', url: `/api/sessions/${SID}/statuses/${sent.statusId}/report` })
    assert.deepEqual(report.json<{ data: { recipients: Array<{ number: string }> } }>().data.recipients.map((r) => r.number), [C, lidOf(s, D)])

    await sink.statusPrivacy(SID, { mode: 'allowlist', numbers: [B, lidOf(s, D)] })
    const allow = await send(s, { type: 'text', content: 'as the phone says: only share with', audience: { type: 'phone' } })
    assertReached(s, await settledPost(s, allow.platformMessageId), [B, D], 'allowlist')
    await sink.statusPrivacy(SID, { mode: 'contacts', numbers: [] })
    const all = await send(s, { type: 'text', content: 'as the phone says: my contacts', audience: { type: 'phone' } })
    assertReached(s, await settledPost(s, all.platformMessageId), [A, B, C, D], 'contacts')
  })

  await t.test('a legacy account posts by phone number: a LID-only recipient is unreachable there', async () => {
    await s.link('legacy', LEGACY, { legacy: true })
    const result = await s.app.platform.sendStatus('legacy', { messageId: s.app.platform.newMessageId('legacy'), content: { kind: 'text', text: 'legacy' }, recipients: [lidOf(s, D), A] })
    assert.deepEqual(result.unreachable, [lidOf(s, D)])
    assert.ok(!result.recipientJids.some((j) => j.endsWith('@lid')))
    await s.emu.waitForStatus((r) => r.id === result.messageId && r.decrypted, 15_000)
  })

  await t.test('schedules: the saved audience is read at the run; one deleted before the run fails it with the error recorded', async () => {
    const sched = `/api/sessions/${SID}/scheduled-statuses`
    const make = async (numbers: string[]): Promise<string> =>
      (await s.api({ method: 'POST', url: `/api/sessions/${SID}/audiences`, payload: { name: 'later', numbers } })).json<{ data: { id: string } }>().data.id
    const kept = await make([A, C])
    const gone = await make([B])
    const at = new Date(Date.now() + 2500).toISOString()
    const create = async (audienceId: string, content: string): Promise<string> => {
      const res = await s.api({ method: 'POST', url: sched, payload: { status: { type: 'text', content, audience: { type: 'saved', audienceId } }, at } })
      assert.equal(res.statusCode, 200, res.body)
      return res.json<{ data: { id: string } }>().data.id
    }
    const firing = await create(kept, 'scheduled to the saved audience')
    const failing = await create(gone, 'scheduled to a deleted audience')
    // before the run: one audience changes, the other goes
    assert.equal((await s.api({ method: 'PATCH', url: `/api/sessions/${SID}/audiences/${kept}`, payload: { numbers: [C] } })).statusCode, 200)
    assert.equal((await s.api({ method: 'DELETE', url: `/api/sessions/${SID}/audiences/${gone}` })).statusCode, 200)

    const fired = await s.events.next('scheduled-status-fired', (p) => p.scheduleId === firing, 20_000)
    const record = await s.emu.waitForStatus((r) => r.text === 'scheduled to the saved audience' && r.decrypted, 15_000)
    await s.emu.settled()
    assertReached(s, s.emu.status(record.id), [C], 'allowlist')
    assert.deepEqual((await listed(s, fired.statusId)).audience?.recipients, [C])

    const failed = await s.events.next('scheduled-status-failed', (p) => p.scheduleId === failing, 20_000)
    assert.equal(failed.state, 'failed')
    assert.match(failed.error, /no saved audience .* in this session/)
    const run = await waitFor(async () => {
      const got = (await s.api({ method: 'GET', url: `${sched}/${failing}` })).json<{ data: { runs: Array<{ state: string, error: string | null, statusId: string | null }> } }>().data
      return got.runs[0]?.state === 'failed' ? got.runs[0] : null
    }, 10_000, 'the failed run recorded')
    assert.match(run.error ?? '', /body\.audience\.audienceId: no saved audience/)
    assert.equal(run.statusId, null)
    assert.equal(s.emu.statuses().filter((r) => r.text === 'scheduled to a deleted audience').length, 0, 'nothing posted')
  })
})
