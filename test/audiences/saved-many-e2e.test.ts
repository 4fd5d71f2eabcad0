import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startStack } from '../stack.js'

// A saved audience of 5,000 (issue 24) posted through the HTTP API, real Baileys and the emulator: the
// send goes out in chunks under one message id, each chunk with its own audience list and allowlist, and
// the emulator's record holds all 5,000 recipients, every one of which decrypted it.

const OWN = '4915500000001'
const N = 5000
const CHUNK = 256

test('a saved audience of 5,000 posts in chunks and reaches all 5,000', { timeout: 290_000 }, async (t) => {
  const s = await startStack(t, { STATUS_CHUNK_SIZE: String(CHUNK) })
  // contacts made in one go in the emulator (as the 1,000-recipient tests do), not linked one by one
  const contacts = s.emu.addContacts(N, { prefix: '4475' })
  await s.link('many', OWN)
  const numbers = contacts.map((c) => c.number)
  const made = await s.api({ method: 'POST', url: '/api/sessions/many/audiences', payload: { name: 'five thousand', numbers } })
  assert.equal(made.statusCode, 200, made.body)
  const audienceId = made.json<{ data: { id: string, count: number } }>().data.id
  assert.equal(made.json<{ data: { count: number } }>().data.count, N)

  const res = await s.api({ method: 'POST', url: '/api/sessions/many/send-status', payload: { type: 'text', content: 'to five thousand', audience: { type: 'saved', audienceId } } })
  assert.equal(res.statusCode, 200, res.body)
  type Sent = { statusId: string, state: string, contactCount: number, sentCount: number, platformMessageId: string, unreachable: string[] }
  const sent = res.json<{ data: Sent }>().data
  assert.deepEqual([sent.state, sent.contactCount, sent.sentCount, sent.unreachable], ['sent', N, N, []])

  await s.emu.waitForStatus((r) => r.id === sent.platformMessageId && r.recipients.length >= N + 1, 120_000)
  await s.emu.settled(200_000)
  const record = s.emu.status(sent.platformMessageId)
  assert.equal(record.rejected, undefined, JSON.stringify(record.rejected))
  assert.deepEqual(record.errors, [])
  assert.equal(record.stanzas.length, Math.ceil((N + 1) / CHUNK), 'in chunks under one message id')
  const lids = [`${s.emu.getAccount(OWN).lid}@lid`, ...contacts.map((c) => `${c.lid}@lid`)]
  record.stanzas.forEach((stanza, i) => {
    assert.equal(stanza.accepted, true)
    assert.equal(stanza.statusSetting, 'allowlist')
    assert.deepEqual(stanza.audience, lids.slice(i * CHUNK, (i + 1) * CHUNK), `chunk ${i + 1}'s audience`)
  })
  assert.equal(record.audience.length, N + 1, 'the record holds all 5,000 and the own LID')
  const decrypted = new Set(record.deliveries.filter((d) => d.decrypted).map((d) => d.number))
  assert.equal(numbers.filter((n) => !decrypted.has(n)).length, 0, 'every recipient decrypted it')

  const list = await s.api({ method: 'GET', url: '/api/sessions/many/sent-statuses' })
  const item = list.json<{ data: Array<{ id: string, audience: { type: string, audienceId: string, recipients: string[] } | null }> }>().data
    .find((x) => x.id === sent.statusId)
  assert.deepEqual([item?.audience?.type, item?.audience?.audienceId, item?.audience?.recipients.length], ['saved', audienceId, N])
  assert.deepEqual(s.emu.rejectedMessages(), [])
})
