import assert from 'node:assert/strict'
import { test } from 'node:test'
import { form, png } from '../uploads/fixtures.js'
import { mediaTrusted, startStack, type Stack } from '../stack.js'

// Issue 14, "send without waiting": `wait: false` and lists above SEND_WAIT_MAX_RECIPIENTS answer 202 with
// `state: sending` once the status is recorded; the send goes on in the background through real Baileys
// against the emulator, and its end reaches clients as events (status-sent, or statuses-updated partial).

const OWN = '4915400000001'
const SID = 'bg'

interface Accepted { statusId: string, platformMessageId: string, contactCount: number, state: string, message: string }
interface Listed { id: string, state: string, sentCount: number, contactCount: number, platformMessageId: string }

async function post (s: Stack, body: Record<string, unknown>): Promise<{ status: number, data: Accepted & { sentCount?: number }, error?: string }> {
  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: body })
  const json = res.json<{ data: Accepted, error?: string }>()
  return { status: res.statusCode, data: json.data, ...(json.error !== undefined ? { error: json.error } : {}) }
}

const listed = async (s: Stack): Promise<Listed[]> =>
  (await s.api({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })).json<{ data: Listed[] }>().data

test('send-status without waiting: 202 at once, then the events; lists above SEND_WAIT_MAX_RECIPIENTS never wait', { timeout: 120_000 }, async (t) => {
  const s = await startStack(t, { SEND_WAIT_MAX_RECIPIENTS: '5', STATUS_CHUNK_SIZE: '40' })
  await s.link(SID, OWN)
  const few = s.emu.addContacts(3, { prefix: '4476' }).map((c) => c.number)
  const many = s.emu.addContacts(200, { prefix: '4477' }).map((c) => c.number)

  await t.test('wait: false → 202 sending; status-sent follows, the list shows it sent, every recipient decrypted it', async () => {
    const { status, data } = await post(s, { type: 'text', content: 'in the background', wait: false, targetNumbers: few.join(',') })
    assert.equal(status, 202)
    assert.deepEqual([data.state, data.contactCount], ['sending', 3])
    assert.match(data.statusId, /^[0-9]+$/)
    assert.ok(data.platformMessageId.length > 0)
    const ev = await s.events.next('status-sent', (p) => p.statusId === data.statusId, 30_000)
    assert.equal(ev.platformMessageId, data.platformMessageId)
    const row = (await listed(s)).find((r) => r.id === data.statusId)
    assert.deepEqual(row && [row.state, row.sentCount, row.contactCount, row.platformMessageId], ['sent', 3, 3, data.platformMessageId])
    const record = await s.emu.waitForStatus((r) => r.id === data.platformMessageId && r.decrypted && r.recipients.length === 4, 20_000)
    assert.deepEqual([...record.recipients].sort(), [OWN, ...few].sort())
    assert.deepEqual(record.errors, [])
  })

  await t.test('a list above SEND_WAIT_MAX_RECIPIENTS answers 202 without wait: false; progress events per chunk, then status-sent', async () => {
    const { status, data } = await post(s, { type: 'text', content: 'to many, not held', targetNumbers: many.join(',') })
    assert.equal(status, 202)
    assert.deepEqual([data.state, data.contactCount], ['sending', 200])
    await s.events.next('status-sent', (p) => p.statusId === data.statusId, 60_000)
    const progress = s.events.all('status-send-progress', (p) => p.statusId === data.statusId)
    assert.ok(progress.length >= 5, `${progress.length} progress events for 201 recipients in chunks of 40`)
    assert.deepEqual(progress.at(-1) && [progress.at(-1)!.sent, progress.at(-1)!.total], [201, 201])
    const record = await s.emu.waitForStatus((r) => r.id === data.platformMessageId && r.decrypted && r.recipients.length === 201, 30_000)
    assert.deepEqual(record.errors, [])
  })

  await t.test('a short list with wait left out still answers 200 sent', async () => {
    const { status, data } = await post(s, { type: 'text', content: 'held', targetNumbers: few.join(',') })
    assert.equal(status, 200)
    assert.deepEqual([data.state, data.sentCount], ['sent', 3])
  })

  await t.test('wait must be a boolean: 400 naming the field', async () => {
    const { status, error } = await post(s, { type: 'text', content: 'x', wait: 'nope', targetNumbers: few.join(',') })
    assert.equal(status, 400)
    assert.match(error ?? '', /wait/)
  })

  await t.test('a background send cut short by a logout: 202 first, then statuses-updated partial and the row partial, no unhandled rejection', async () => {
    const since = s.events.mark()
    const { status, data } = await post(s, { type: 'text', content: 'cut short', wait: false, targetNumbers: many.join(',') })
    assert.equal(status, 202)
    await s.events.first('status-send-progress', (p) => p.statusId === data.statusId, since, 30_000)
    s.emu.fault(OWN, 'logout')
    const ev = await s.events.first('statuses-updated', (p) => p.statusId === data.statusId, since, 60_000)
    assert.equal(ev.action, 'partial')
    const row = (await listed(s)).find((r) => r.id === data.statusId)
    assert.equal(row?.state, 'partial')
    // the first chunk of 40 carries the own number too: 39 contacts
    assert.ok(row.sentCount >= 39 && row.sentCount < 200, `sentCount ${row.sentCount}`)
  })
})

test('an image status without waiting: 202, then status-sent, and the recipient decrypted it', { timeout: 90_000, skip: !mediaTrusted() && 'needs NODE_EXTRA_CA_CERTS=test/.certs/cert.pem (npm test sets it)' }, async (t) => {
  const s = await startStack(t)
  await s.link(SID, OWN)
  const [to] = s.emu.addContacts(1, { prefix: '4478' }).map((c) => c.number)
  const { payload, headers } = form({ field: 'image', filename: 'pic.png', type: 'image/png', data: png() })
  const up = await s.api({ method: 'POST', url: '/api/upload-image', payload, headers })
  assert.equal(up.statusCode, 200, up.body)
  const { status, data } = await post(s, { type: 'image', content: up.json<{ filename: string }>().filename, caption: 'later', wait: false, targetNumbers: to })
  assert.equal(status, 202)
  assert.equal(data.state, 'sending')
  await s.events.next('status-sent', (p) => p.statusId === data.statusId, 30_000)
  const record = await s.emu.waitForStatus((r) => r.id === data.platformMessageId && r.decrypted && r.recipients.includes(to), 20_000)
  assert.equal(record.type, 'image')
  assert.deepEqual(record.errors, [])
})
