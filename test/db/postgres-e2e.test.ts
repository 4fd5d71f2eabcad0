import assert from 'node:assert/strict'
import { test } from 'node:test'
import pg from 'pg'
import { build, waitFor } from '../helper.js'
import { startStack } from '../stack.js'
import { postgresUrl, usePostgres } from '../support/db-matrix.js'
import { dbOf } from '../support/db.js'

// The service on PostgreSQL (DATABASE_URL) through real Baileys and the emulator: link, send, receipts,
// a reaction and a reply stored, then a new service process state (another data folder: nothing on disk carries over) on the
// same database reconnects the session from the stored auth state without linking again.

const OWN = '4915100000301'
const A = '4915100000311'
const B = '4915100000312'
const SID = 'pg-main'
usePostgres()

test('on PostgreSQL: link, send, receipts, a reaction and a reply stored; a restarted service reconnects from the stored auth state', { timeout: 120_000 }, async (t) => {
  const url = await postgresUrl()
  const s = await startStack(t, { DATABASE_URL: url })
  assert.equal(dbOf(s.app).dialect, 'postgres')
  await s.link(SID, OWN)

  const res = await s.api({ method: 'POST', url: `/api/sessions/${SID}/send-status`, payload: { type: 'text', content: 'on postgres', targetNumbers: `${A},${B}` } })
  assert.equal(res.statusCode, 200, res.body)
  const sent = res.json<{ data: { statusId: string, platformMessageId: string, contactCount: number, state: string } }>().data
  assert.equal(sent.contactCount, 2)
  assert.equal(sent.state, 'sent')
  await s.emu.waitForStatus((r) => r.id === sent.platformMessageId && r.decrypted, 10_000)

  await s.emu.sendView(sent.platformMessageId, { viewer: A, type: 'read', via: 'pn' })
  await s.emu.sendView(sent.platformMessageId, { viewer: B, type: 'played', via: 'lid' })
  const update = await s.events.next('status-viewers-update', (p) => p.statusId === sent.statusId && p.viewers.length === 2, 15_000)
  assert.deepEqual(update.viewers.map((v) => v.number).sort(), [A, B].sort())

  // a reaction and a reply (committed inside Baileys' key transaction, before its receipt)
  await s.emu.react(sent.platformMessageId, { from: A, emoji: '👍' })
  await s.events.next('status-reaction', (p) => p.statusId === sent.statusId, 15_000)
  const reply = await s.emu.reply(sent.platformMessageId, { from: B, text: 'nice' })
  await s.events.next('status-reply', (p) => p.reply.messageId === reply.messageId, 15_000)
  const reactions = await s.api({ method: 'GET', url: `/api/sessions/${SID}/status-reactions/${sent.statusId}` })
  assert.deepEqual(reactions.json<{ data: Array<{ number: string, emoji: string }> }>().data.map((r) => [r.number, r.emoji]), [[A, '👍']])

  // what the tables hold, read with a separate client
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.after(async () => { await client.end() })
  const viewers = await client.query<{ viewer: string, number: string | null }>('select v.viewer, v.number from viewers v join statuses s on s.id = v.status_id where s.message_id = $1 order by v.viewer', [sent.platformMessageId])
  assert.deepEqual(viewers.rows.map((r) => r.number), [A, B].sort())
  const status = await client.query<{ state: string, sent_count: string }>('select state, sent_count from statuses where message_id = $1', [sent.platformMessageId])
  assert.equal(status.rows[0].state, 'sent')
  const recipients = await client.query('select jid from status_recipients r join statuses s on s.id = r.status_id where s.message_id = $1 and confirmed = 1', [sent.platformMessageId])
  assert.equal(recipients.rowCount, 3, 'both contacts and the own number, committed')
  const auth = await client.query<{ creds: number, keys: number }>(
    'select (select count(*) from auth_creds where session_id = $1)::int as creds, (select count(*) from auth_keys where session_id = $1)::int as keys', [SID])
  assert.equal(auth.rows[0].creds, 1)
  assert.ok(auth.rows[0].keys > 0, 'Signal keys are in the database')
  const linked = await client.query<{ linked: number, own_number: string }>('select linked::int as linked, own_number from sessions where id = $1', [SID])
  assert.deepEqual(linked.rows[0], { linked: 1, own_number: OWN })

  // the service stops; a new one with an empty data folder on the same database logs in again
  await s.app.close()
  const again = await build(t, { WA_WEBSOCKET_URL: s.emu.wsUrl, WA_TEST_TRUST_ROOT: s.emu.rootPublicKey, DATABASE_URL: url })
  assert.notEqual(again.dir, s.dir)
  let sawQr = false
  const snap = await waitFor(() => {
    const current = again.app.platform.snapshot(SID)
    if (current?.qrCode !== null && current?.qrCode !== undefined) sawQr = true
    return current?.connected === true ? current : null
  }, 30_000, 'the session to reconnect on the restarted service')
  assert.equal(snap.ownNumber, OWN)
  assert.equal(sawQr, false, 'no QR: it logged in with the stored auth state')

  // it still works after the restart: a view of the old status is stored by the new process
  await again.app.platform.restartSession(SID).catch(() => {})
  await waitFor(() => again.app.platform.snapshot(SID)?.connected, 30_000, 'reconnect after restartSession')
  const viewersRes = await again.api({ method: 'GET', url: `/api/sessions/${SID}/status-viewers/${sent.statusId}` })
  assert.equal(viewersRes.statusCode, 200, viewersRes.body)
  assert.equal(viewersRes.json<{ data: unknown[] }>().data.length, 2)
})
