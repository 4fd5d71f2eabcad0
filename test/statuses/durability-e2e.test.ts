import assert from 'node:assert/strict'
import { test } from 'node:test'
import { waitFor } from '../helper.js'
import { startStack, type Stack } from '../stack.js'
import { dbOf } from '../support/db.js'

// Issue 11, the send half, through the HTTP API, real Baileys and the emulator: a link dropped in the
// middle of a 1,000-recipient send, and a logout in the middle of one. The emulator's record of who
// received the status (decrypted it) is the truth the service's record is compared with.

const OWN = '4915200000001'
const SID = 'durable'

interface Answer { statusId: string, platformMessageId: string, contactCount: number, state: string, sentCount: number, message: string }
interface Listed { id: string, state: string, sentCount: number, contactCount: number, error: string | null }

/** Fires `kind` on the account shortly after a progress event reports `atSent` recipients done. */
function faultDuring (s: Stack, kind: 'drop' | 'logout', atSent: number, delayMs: number): { fired: () => boolean, off: () => void } {
  let fired = false
  const listener = (p: { sessionId: string, sent: number }): void => {
    if (fired || p.sessionId !== SID || p.sent < atSent) return
    fired = true
    setTimeout(() => { s.emu.fault(OWN, kind) }, delayMs)
  }
  s.app.domainEvents.on('status-send-progress', listener)
  return { fired: () => fired, off: () => { s.app.domainEvents.off('status-send-progress', listener) } }
}

/** Numbers the service recorded for a status: `confirmed` ones (acknowledged) or `all` (also chunks cut off before their ack). */
async function recorded (s: Stack, statusId: string, which: 'confirmed' | 'all' = 'all'): Promise<string[]> {
  let query = dbOf(s.app).db.selectFrom('status_recipients').select('jid').where('status_id', '=', Number(statusId))
  if (which === 'confirmed') query = query.where('confirmed', '=', 1)
  return (await query.execute()).map((r) => r.jid.replace(/@s\.whatsapp\.net$/, '')).sort()
}

test('send durability with real Baileys: a drop mid-send continues under the same id; a post during a reconnect waits for it; a logout mid-send leaves a partial status that revokes exactly its recipients', { timeout: 150_000 }, async (t) => {
  const s = await startStack(t, { STATUS_CHUNK_SIZE: '100' })
  await s.link(SID, OWN)
  const contacts = s.emu.addContacts(1000, { prefix: '4474' }).map((c) => c.number)
  const send = async (content: string): Promise<Answer> => {
    const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content, targetNumbers: contacts.join(',') } })
    assert.equal(res.statusCode, 200, res.body)
    return res.json<{ data: Answer }>().data
  }
  const listed = async (): Promise<Listed[]> => (await s.api({ method: 'GET', url: `/api/sessions/${SID}/sent-statuses` })).json<{ data: Listed[] }>().data

  await t.test('(a) a drop in the middle: the request succeeds, every recipient has it exactly once, one row sent', async () => {
    const closesBefore = s.events.all('connection-status', (p) => p.sessionId === SID && p.status === 'close').length
    const fault = faultDuring(s, 'drop', 300, 20)
    const started = Date.now()
    const sent = await send('through a dropped link')
    fault.off()
    t.diagnostic(`1,000 recipients with a drop after 300: ${Date.now() - started} ms`)
    assert.ok(fault.fired())
    assert.ok(s.events.all('connection-status', (p) => p.sessionId === SID && p.status === 'close').length > closesBefore, 'the link really dropped')
    assert.deepEqual([sent.state, sent.sentCount, sent.contactCount], ['sent', 1000, 1000])
    await s.emu.settled(30_000)
    const record = s.emu.status(sent.platformMessageId)
    assert.deepEqual(record.duplicateRecipients, [])
    assert.equal(record.recipients.length, 1001)
    assert.deepEqual([...record.recipients].sort(), [OWN, ...contacts].sort())
    assert.deepEqual(record.errors, [])
    assert.deepEqual(await recorded(s, sent.statusId), [OWN, ...contacts].sort())
    const rows = (await listed()).filter((r) => r.id === sent.statusId)
    assert.deepEqual(rows.map((r) => [r.state, r.sentCount]), [['sent', 1000]])
  })

  await t.test('(b) a post that arrives while the session reconnects after a drop waits for it: 200, every recipient has it', async () => {
    await waitFor(() => s.app.platform.snapshot(SID)?.connected, 20_000, 'the session to be open again')
    s.emu.fault(OWN, 'drop')
    // the reconnect's first rung is 1 s away (RECONNECT base): the post below arrives in between
    await waitFor(() => s.app.platform.snapshot(SID)?.connected === false && s.app.platform.reachable(SID), 5000, 'the session to be reconnecting')
    const few = contacts.slice(0, 10)
    const asked = s.app.platform.snapshot(SID)
    const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content: 'while reconnecting', targetNumbers: few.join(',') } })
    assert.equal(asked?.connected, false, 'the post arrived while the session was not connected')
    assert.equal(res.statusCode, 200, res.body)
    const sent = res.json<{ data: Answer }>().data
    assert.deepEqual([sent.state, sent.sentCount, sent.contactCount], ['sent', 10, 10])
    await s.emu.settled(30_000)
    assert.deepEqual([...s.emu.status(sent.platformMessageId).recipients].sort(), [OWN, ...few].sort())
  })

  await t.test('(c) a logout in the middle: 200 with state partial, listed with the recipients that have it, revoke reaches exactly them', async () => {
    await waitFor(() => s.app.platform.snapshot(SID)?.connected, 20_000, 'the session to be open again')
    const fault = faultDuring(s, 'logout', 300, 0)
    const sent = await send('cut short by a logout')
    fault.off()
    assert.ok(fault.fired())
    assert.equal(sent.state, 'partial', sent.message)
    assert.ok(sent.sentCount >= 299 && sent.sentCount < 1000, `sentCount ${sent.sentCount}`)
    assert.equal(sent.contactCount, 1000)
    assert.match(sent.message, new RegExp(`^Status sent to ${sent.sentCount} of 1000 contacts; sending stopped: WhatsApp is not connected`))

    await s.emu.settled(30_000)
    const record = s.emu.status(sent.platformMessageId)
    const have = await recorded(s, sent.statusId)
    // a chunk written after the platform ended the stream but before the client read that reaches the
    // emulator without an ack: the service keeps such recipients as unconfirmed (not in sentCount)
    assert.deepEqual([...record.recipients].sort(), have, 'the service recorded exactly who received it')
    assert.equal((await recorded(s, sent.statusId, 'confirmed')).length, sent.sentCount + 1, 'own number + sentCount contacts')
    assert.deepEqual(record.duplicateRecipients, [])

    const ev = await s.events.next('statuses-updated', (p) => p.statusId === sent.statusId && p.action === 'partial')
    assert.match(ev.message ?? '', /sending stopped/)
    const rows = await listed()
    assert.deepEqual(rows.filter((r) => r.id === sent.statusId).map((r) => [r.state, r.sentCount, r.contactCount]), [['partial', sent.sentCount, 1000]])
    const stats = (await s.api({ method: 'GET', url: '/api/stats' })).json<{ data: { totalStatuses: number } }>().data
    assert.equal(stats.totalStatuses, rows.length, '/api/stats counts what sent-statuses lists')

    // link the account again (a new device), then revoke
    await waitFor(() => s.app.platform.snapshot(SID)?.status === 'logged-out', 10_000, 'logged out')
    await s.app.platform.restartSession(SID)
    const qr = await waitFor(() => s.app.platform.snapshot(SID)?.qrCode, 15_000, 'a new QR code')
    await s.emu.scan(OWN, qr)
    await waitFor(() => s.app.platform.snapshot(SID)?.connected, 30_000, 'linked again')
    const res = await s.api({ method: 'DELETE', url: `/api/sessions/${SID}/delete-status/${sent.statusId}?revoke=true` })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json<{ data: { deletedFromPlatform: boolean } }>().data.deletedFromPlatform, true)
    const revoked = await waitFor(() => {
      const r = s.emu.status(sent.platformMessageId)
      return (r.revokedFor?.length ?? 0) >= have.length ? r : null
    }, 30_000, 'the revoke in the emulator')
    assert.deepEqual([...(revoked.revokedFor ?? [])].sort(), have)
  })
})
