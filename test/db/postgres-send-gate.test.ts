import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import pg from 'pg'
import { waitFor } from '../helper.js'
import { startStack, type Stack } from '../stack.js'
import { postgresUrl, usePostgres } from '../support/db-matrix.js'

// On PostgreSQL the creds Baileys emits on pair-success are written asynchronously, while Baileys answers
// the platform right after emitting them. The send gate holds the answer until the write commits: the
// platform (the emulator) never counts a linked device the database does not hold. Writes are held back
// with a table lock taken by another connection; a write that fails drops the connection instead.

const OWN = '4915100000401'
usePostgres()

/** Starts a session and waits for its QR code (not scanned yet). */
async function showQr (s: Stack, sessionId: string, number: string): Promise<string> {
  s.emu.createAccount(number)
  // as POST /api/sessions makes it: the lease with the row, so the cluster takes no orphan over and starts it again
  await s.app.sessions.create({ sessionId, sessionName: sessionId, authMethod: 'qrcode', phoneNumber: null })
  return await waitFor(() => s.app.platform.snapshot(sessionId)?.qrCode, 15_000, `QR code of ${sessionId}`)
}

async function client (t: TestContext, url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  t.after(async () => { await c.end().catch(() => {}) })
  return c
}

const credsRows = async (c: pg.Client, sessionId: string): Promise<number> =>
  (await c.query<{ n: number }>('select count(*)::int as n from auth_creds where session_id = $1 and creds like \'%"account"%\'', [sessionId])).rows[0].n

test('on PostgreSQL the answer to pair-success waits for the creds to commit', { timeout: 90_000 }, async (t) => {
  const url = await postgresUrl()
  const s = await startStack(t, { DATABASE_URL: url })
  const qr = await showQr(s, 'gated', OWN)
  const blocker = await client(t, url)
  const reader = await client(t, url)
  // inserts and updates of auth_creds wait for this transaction; reads do not
  await blocker.query('begin')
  await blocker.query('lock table auth_creds in share row exclusive mode')

  let whileHeld: { creds: number, devices: number }
  try {
    await s.emu.scan(OWN, qr)
    // Baileys has emitted the new creds and answered; the answer must still be held
    await new Promise((resolve) => setTimeout(resolve, 1500))
    whileHeld = { creds: await credsRows(reader, 'gated'), devices: s.emu.getAccount(OWN).linkedDevices.length }
  } finally {
    // released before any assertion can fail: the service's close waits for its writes
    await blocker.query('commit')
  }
  assert.deepEqual(whileHeld, { creds: 0, devices: 0 }, 'the creds are not stored yet, and the platform has not heard the answer')
  await waitFor(() => s.app.platform.snapshot('gated')?.connected, 30_000, 'the session to connect')
  assert.equal(await credsRows(reader, 'gated'), 1)
  assert.equal(s.emu.getAccount(OWN).linkedDevices.length, 1)
})

test('on PostgreSQL a creds write that fails drops the connection: the platform links no device the database lacks', { timeout: 90_000 }, async (t) => {
  const url = await postgresUrl()
  const s = await startStack(t, { DATABASE_URL: url })
  const qr = await showQr(s, 'refused', '4915100000402')
  const admin = await client(t, url)
  // every later write of creds fails (existing rows are not checked)
  await admin.query('alter table auth_creds add constraint refuse_creds check (false) not valid')

  const since = s.events.mark()
  await s.emu.scan('4915100000402', qr)
  // the failed write drops the socket; the session comes back with a new QR code and nothing linked
  await waitFor(() => { const q = s.app.platform.snapshot('refused')?.qrCode; return q !== undefined && q !== null && q !== qr }, 30_000, 'a new QR code after the refused pairing')
  // from what the database holds: no login with the pairing's unstored creds, which the platform refuses (401, logged out)
  assert.deepEqual(s.events.all('connection-status', (e) => e.sessionId === 'refused' && e.status === 'logged-out', since), [])
  assert.deepEqual(s.emu.getAccount('4915100000402').linkedDevices, [])
  assert.equal(await credsRows(admin, 'refused'), 0)
  assert.equal(s.app.platform.snapshot('refused')?.connected, false)
})
