import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { StatusRecord } from '@status-tracker/emulator'
import { startStack } from '../stack.js'

// A 1,000-recipient status from an LID-migrated account, chunked under one message id (each chunk with
// its own audience list), accepted by the strict emulator and decrypted by every recipient; a second post
// to the same 1,000 carries no sender key distribution at all (docs/platform.md).

const OWN = '4915300000001'
const N = 1000
const CHUNK = 256

test('1,000 recipients: chunks accepted with their own audience lists; a second post sends no SKDM; the revoke reaches all', { timeout: 170_000 }, async (t) => {
  const s = await startStack(t, { STATUS_CHUNK_SIZE: String(CHUNK) })
  const contacts = s.emu.addContacts(N, { prefix: '4473' })
  await s.link('many', OWN)
  const lid = (c: { lid: string }): string => `${c.lid}@lid`
  const ownLid = `${s.emu.getAccount(OWN).lid}@lid`

  const post = async (content: string): Promise<StatusRecord & { statusId: string }> => {
    const res = await s.api({ method: 'POST', url: '/api/sessions/many/send-status', payload: { type: 'text', content, targetNumbers: contacts.map((c) => c.number).join(',') } })
    assert.equal(res.statusCode, 200, res.body)
    const sent = res.json<{ data: { statusId: string, state: string, sentCount: number, platformMessageId: string, unreachable: string[] } }>().data
    assert.deepEqual([sent.state, sent.sentCount, sent.unreachable], ['sent', N, []])
    await s.emu.waitForStatus((r) => r.id === sent.platformMessageId && r.recipients.length >= N + 1, 60_000)
    await s.emu.settled(120_000)
    const record = s.emu.status(sent.platformMessageId)
    assert.equal(record.rejected, undefined, JSON.stringify(record.rejected))
    assert.deepEqual(record.errors, [])
    const chunks = Math.ceil((N + 1) / CHUNK)
    assert.equal(record.stanzas.length, chunks)
    // each chunk lists its own users: own LID first, then the recipients in order
    const users = [ownLid, ...contacts.map(lid)]
    record.stanzas.forEach((stanza, i) => {
      assert.equal(stanza.accepted, true)
      assert.equal(stanza.statusSetting, 'allowlist')
      assert.deepEqual(stanza.audience, users.slice(i * CHUNK, (i + 1) * CHUNK), `chunk ${i + 1}'s audience`)
    })
    const decrypted = new Set(record.deliveries.filter((d) => d.decrypted).map((d) => d.number))
    assert.equal(contacts.filter((c) => !decrypted.has(c.number)).length, 0, 'every recipient decrypted it')
    assert.ok(decrypted.has(OWN), 'the own phone decrypted it')
    return { ...record, statusId: sent.statusId }
  }

  const first = await post('to a thousand')
  assert.equal(first.skdmDevices.length, N + 1, 'first post: the key to every recipient device and the own phone')
  const second = await post('to the same thousand again')
  assert.deepEqual(second.skdmDevices, [`${s.emu.getAccount(OWN).lid}@lid`], 'second post: an SKDM to the own phone only (own devices get it every post: whatsapp-rust #999)')

  // the revoke goes to the same audience in the same chunks, without <meta> (the emulator NACKs it with one)
  const res = await s.api({ method: 'DELETE', url: `/api/sessions/many/delete-status/${second.statusId}?revoke=true` })
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.json<{ data: { deletedFromPlatform: boolean } }>().data.deletedFromPlatform, true)
  await s.emu.settled(120_000)
  const revoked = s.emu.status(second.id)
  assert.equal(revoked.revoked, true)
  assert.equal(revoked.revokedFor?.length, N + 1, 'every recipient and the own phone got the revoke')
  assert.deepEqual(s.emu.rejectedMessages(), [])
})
