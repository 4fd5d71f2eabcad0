import assert from 'node:assert/strict'
import { test } from 'node:test'
import { csvField } from '../../plugins/statuses/report.js'
import { waitFor } from '../helper.js'
import { startStack, type Stack } from '../stack.js'

// The per-status report and pacing through the HTTP API, real Baileys and the emulator (issue 24).

const OWN = '4915300000001'
const A = '4915300000011'
const B = '4915300000012'
const C = '4915300000013'
const SID = 'report'

interface Line { number: string, deliveredAt: string | null, viewedAt: string | null, reaction: string | null, repliedAt: string | null }
interface Report { statusId: string, recipients: Line[], totals: { recipients: number, delivered: number, viewed: number, reacted: number, replied: number } }

type Answer = { success: boolean, data?: { statusId: string, platformMessageId: string }, error?: string }
async function send (s: Stack, body: Record<string, unknown>): Promise<{ status: number, headers: Record<string, unknown>, body: Answer }> {
  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: body })
  return { status: res.statusCode, headers: res.headers, body: res.json() }
}

test('CSV fields are quoted and defused as RFC 4180 and spreadsheets need', () => {
  assert.equal(csvField(null), '')
  assert.equal(csvField('4915300000011'), '4915300000011')
  assert.equal(csvField('a,b'), '"a,b"')
  assert.equal(csvField('say "hi"'), '"say ""hi"""')
  assert.equal(csvField('line\nbreak'), '"line\nbreak"')
  assert.equal(csvField('=1+1'), "'=1+1")
})

test('report and pacing through real Baileys and the emulator', { timeout: 120_000 }, async (t) => {
  const s = await startStack(t, { SEND_MAX_STATUSES_PER_DAY: '3', RATE_LIMIT_MAX: '1000000' })
  await s.link(SID, OWN)
  for (const number of [A, B, C]) s.emu.addContact({ number })

  await t.test('the report of a status delivered, viewed, reacted and replied to, as JSON and CSV', async () => {
    const sent = await send(s, { type: 'text', content: 'report me', targetNumbers: `${A},${B},${C}` })
    assert.equal(sent.status, 200, JSON.stringify(sent.body))
    const { statusId, platformMessageId: msgId } = sent.body.data!
    await s.emu.waitForStatus((r) => r.id === msgId && r.decrypted, 15_000)
    await s.emu.sendView(msgId, { viewer: A, type: 'delivery' })
    await s.emu.sendView(msgId, { viewer: B, type: 'delivery', via: 'lid' })
    await s.emu.sendView(msgId, { viewer: A, type: 'read' })
    await s.emu.react(msgId, { from: A, emoji: '🔥' })
    await s.emu.reply(msgId, { from: A, text: 'nice, "really"' })
    const url = `/api/sessions/${SID}/statuses/${statusId}/report`
    const report = await waitFor(async () => {
      const res = await s.api({ method: 'GET', url })
      assert.equal(res.statusCode, 200, res.body)
      const r = res.json<{ data: Report }>().data
      return r.totals.delivered === 2 && r.totals.viewed === 1 && r.totals.reacted === 1 && r.totals.replied === 1 ? r : null
    }, 20_000, 'the report to show every answer')
    assert.deepEqual(report.totals, { recipients: 3, delivered: 2, viewed: 1, reacted: 1, replied: 1 })
    assert.deepEqual(report.recipients.map((r) => r.number), [A, B, C])
    const [a, b, c] = report.recipients
    assert.ok(a.deliveredAt !== null && a.viewedAt !== null && a.repliedAt !== null)
    assert.equal(a.reaction, '🔥')
    assert.ok(b.deliveredAt !== null, 'a delivery by LID is stored under the number')
    assert.deepEqual([b.viewedAt, b.reaction, b.repliedAt], [null, null, null])
    assert.deepEqual(c, { number: C, deliveredAt: null, viewedAt: null, reaction: null, repliedAt: null })

    const csv = await s.api({ method: 'GET', url, headers: { accept: 'text/csv' } })
    assert.equal(csv.statusCode, 200)
    assert.match(String(csv.headers['content-type']), /^text\/csv/)
    const rows = csv.body.split('\r\n')
    assert.equal(rows.pop(), '', 'ends with a line break')
    assert.deepEqual(rows, [
      'number,deliveredAt,viewedAt,reaction,repliedAt',
      `${A},${a.deliveredAt},${a.viewedAt},🔥,${a.repliedAt}`,
      `${B},${b.deliveredAt},,,`,
      `${C},,,,`
    ])

    const missing = await s.api({ method: 'GET', url: `/api/sessions/${SID}/statuses/999999/report` })
    assert.equal(missing.statusCode, 404)
    assert.equal(missing.json<{ error: string }>().error, 'Status not found')
  })

  await t.test('pacing: the post over SEND_MAX_STATUSES_PER_DAY is refused with 429 and Retry-After; a scheduled run waits', async () => {
    for (const n of [2, 3]) {
      const ok = await send(s, { type: 'text', content: `post ${n}`, targetNumbers: A })
      assert.equal(ok.status, 200, JSON.stringify(ok.body))
    }
    const before = s.emu.statuses().length
    const refused = await send(s, { type: 'text', content: 'post 4', targetNumbers: A })
    assert.equal(refused.status, 429)
    assert.equal(refused.body.success, false)
    assert.match(refused.body.error ?? '', /SEND_MAX_STATUSES_PER_DAY/)
    const retryAfter = Number(refused.headers['retry-after'])
    // the first post of this test leaves the 24-hour window first
    assert.ok(retryAfter > 86_000 && retryAfter <= 86_400, `Retry-After ${String(refused.headers['retry-after'])}`)
    const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/scheduled-statuses`, payload: { status: { type: 'text', content: 'held back' }, at: new Date(Date.now() + 1000).toISOString() } })
    assert.equal(res.statusCode, 200, res.body)
    const id = res.json<{ data: { id: string } }>().data.id
    const held = await waitFor(async () => {
      const g = (await s.api({ method: 'GET', url: `/api/sessions/${SID}/scheduled-statuses/${id}` })).json<{ data: { deferredUntil: string | null, runs: unknown[], state: string } }>().data
      return g.deferredUntil !== null ? g : null
    }, 10_000, 'the run to be deferred')
    assert.equal(held.runs.length, 0)
    assert.equal(held.state, 'active')
    assert.ok(Date.parse(held.deferredUntil!) > Date.now() + 86_000_000)
    assert.equal(s.emu.statuses().length, before, 'nothing more was posted')
  })
})
