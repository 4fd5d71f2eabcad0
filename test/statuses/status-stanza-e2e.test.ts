import assert from 'node:assert/strict'
import { test } from 'node:test'
import { waitFor } from '../helper.js'
import { settledPost, startStack, type Stack } from '../stack.js'

// STATUS_STANZA=status: posts in WA Web's newer publish stanza, `<status id to="status@broadcast">` acked with
// class="status" (docs/platform.md "Two publish stanzas"), through the HTTP API and real Baileys against the
// emulator, which takes it under the same rules as `<message>` and delivers it the same way. The `message`
// default is what every other status test runs.

const OWN = '4915400000001'
const A = '4915400000011'
const B = '4915400000012'
const C = '4915400000013'
/** not on WhatsApp: no LID mapping, so not in a LID-only audience */
const NOBODY = '4915400000099'
const SID = 'st'

interface Sent { statusId: string, platformMessageId: string, contactCount: number, sentCount: number, state: string, unreachable: string[], message: string }

async function post (s: Stack, to: string[], content: string): Promise<{ status: number, body: { success: boolean, data?: Sent, error?: string } }> {
  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content, targetNumbers: to.join(',') } })
  return { status: res.statusCode, body: res.json() }
}

async function sent (s: Stack, to: string[], content: string): Promise<Sent> {
  const { status, body } = await post(s, to, content)
  assert.equal(status, 200, JSON.stringify(body))
  return body.data as Sent
}

const lidOf = (s: Stack, number: string): string => `${number === OWN ? s.emu.getAccount(number).lid : s.emu.getContact(number).lid}@lid`

test('STATUS_STANZA=status: <status> publish stanzas, acked class="status", reach every recipient; chunks, key reuse, revoke and refusals work as with <message>', { timeout: 150_000 }, async (t) => {
  const s = await startStack(t, { STATUS_STANZA: 'status', STATUS_CHUNK_SIZE: '2' }, { autoCreateContacts: false })
  s.emu.addContact({ number: A, devices: 2 })
  s.emu.addContact({ number: B })
  s.emu.addContact({ number: C })
  await s.link(SID, OWN)

  let first!: Sent
  await t.test('a post in two chunks: every stanza a <status>, accepted, LID audience only, decrypted by every device of every recipient', async () => {
    first = await sent(s, [A, B, C, NOBODY], 'status stanza hello')
    assert.deepEqual([first.state, first.contactCount, first.sentCount, first.unreachable], ['sent', 4, 3, [NOBODY]])
    await waitFor(() => s.emu.status(first.platformMessageId).stanzas.length >= 2 || null, 10_000, 'both chunks at the emulator')
    const record = await settledPost(s, first.platformMessageId)
    assert.equal(record.rejected, undefined, JSON.stringify(record.rejected))
    assert.deepEqual(record.errors, [])
    assert.equal(record.text, 'status stanza hello')
    assert.equal(record.stanzas.length, 2, 'own number and 3 contacts in chunks of 2')
    for (const stanza of record.stanzas) {
      assert.equal(stanza.tag, 'status')
      assert.equal(stanza.accepted, true)
      assert.equal(stanza.attrs.to, 'status@broadcast')
      assert.equal(stanza.statusSetting, 'allowlist')
      for (const jid of [...stanza.audience, ...stanza.devices]) assert.match(jid, /@lid$/, 'LID participants only')
    }
    assert.deepEqual([...record.stanzas.flatMap((st) => st.audience)].sort(), [OWN, A, B, C].map((n) => lidOf(s, n)).sort())
    for (const number of [A, B, C]) {
      const got = record.deliveries.filter((d) => d.number === number && d.decrypted).map((d) => d.device)
      assert.equal(new Set(got).size, s.emu.getContact(number).devices, `every device of ${number} decrypted it`)
    }
    assert.ok(record.deliveries.some((d) => d.number === OWN && d.device === 0 && d.decrypted), 'the own phone decrypted it')
  })

  await t.test('the next post: the key holders get a bare <to> only, no key distribution again', async () => {
    const next = await sent(s, [A, B], 'status stanza again')
    assert.equal(next.state, 'sent')
    const record = await settledPost(s, next.platformMessageId)
    assert.ok(record.stanzas.every((st) => st.tag === 'status' && st.accepted))
    const others = record.skdmDevices.filter((jid) => !jid.startsWith(`${s.emu.getAccount(OWN).lid}`))
    assert.deepEqual(others, [], 'no SKDM to contacts holding the key')
    for (const number of [A, B]) assert.ok(record.deliveries.some((d) => d.number === number && d.decrypted), `${number} decrypted it`)
  })

  await t.test('a revoke goes as a <status> too and reaches the audience', async () => {
    const res = await s.api({ method: 'DELETE', url: `/api/sessions/${SID}/delete-status/${first.statusId}?revoke=true` })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json<{ data: { deletedFromPlatform: boolean } }>().data.deletedFromPlatform, true)
    const r = await waitFor(() => { const x = s.emu.status(first.platformMessageId); return x.revoked === true && (x.revokedFor?.length ?? 0) >= 4 ? x : null }, 10_000, 'the revoke in the emulator')
    assert.deepEqual([...(r.revokedFor ?? [])].sort(), [OWN, A, B, C].sort())
  })

  await t.test('a refusal comes back as <ack class="status" error>: the send fails with the code, nothing sent', async () => {
    s.emu.refuseStatuses(OWN, { error: 479 })
    const { status, body } = await post(s, [A], 'refused status stanza')
    assert.equal(status, 500, JSON.stringify(body))
    assert.match(body.error ?? '', /error 479/)
  })
})
