import assert from 'node:assert/strict'
import { test } from 'node:test'
import { waitFor } from '../helper.js'
import { startStack, type Stack } from '../stack.js'
import { dbOf } from '../support/db.js'

// What the server announces (docs/platform.md "What the server announces"), through real Baileys against the
// emulator: a client expiration (<ib><client_expiration t/>) in /api/health and /metrics, an <ack refresh_lid>
// making the service query the peer's LID again, and a <stream:error code="429"> backed off as asked.

const OWN = '4915300000001'
const A = '4915300000011'
const DAY_S = 86_400

interface Health { status: string, checks: { platform: { clientExpiresAt?: string | null, clientExpiresSoon?: boolean } } }

async function health (s: Stack): Promise<Health> {
  const res = await s.api({ method: 'GET', url: '/api/health' })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: Health }>().data
}

async function storedLid (s: Stack, number: string): Promise<string | undefined> {
  const row = await dbOf(s.app).db.selectFrom('auth_keys').select('value')
    .where('session_id', '=', 'n').where('type', '=', 'lid-mapping').where('key_id', '=', number).executeTakeFirst()
  return row === undefined ? undefined : JSON.parse(row.value) as string
}

test('platform notices: client expiration in /api/health and /metrics, refresh_lid acks, a 429 stream error backed off', { timeout: 180_000 }, async (t) => {
  const s = await startStack(t, {}, { autoCreateContacts: false })
  s.emu.addContact({ number: A })
  await s.link('n', OWN)
  const now = Math.floor(Date.now() / 1000)

  await t.test('nothing announced: clientExpiresAt null, healthy', async () => {
    const h = await health(s)
    assert.equal(h.checks.platform.clientExpiresAt, null)
    assert.equal(h.status, 'healthy')
  })

  await t.test('an expiry 10 days ahead is shown and the service stays healthy (CLIENT_EXPIRY_WARN_DAYS 7)', async () => {
    const t10 = now + 10 * DAY_S
    assert.equal(s.emu.announceClientExpiration(OWN, { t: t10 }).sent, 1)
    const expected = new Date(t10 * 1000).toISOString()
    const h = await waitFor(async () => { const h = await health(s); return h.checks.platform.clientExpiresAt === expected ? h : undefined }, 10_000, 'the announced expiry in /api/health')
    assert.equal(h.checks.platform.clientExpiresSoon, false)
    assert.equal(h.status, 'healthy')
  })

  await t.test('an expiry three days ahead makes the service degraded, with the time; /metrics has it', async () => {
    const t3 = now + 3 * DAY_S
    s.emu.announceClientExpiration(OWN, { t: t3 })
    const expected = new Date(t3 * 1000).toISOString()
    const h = await waitFor(async () => { const h = await health(s); return h.checks.platform.clientExpiresAt === expected ? h : undefined }, 10_000, 'the earlier expiry in /api/health')
    assert.equal(h.checks.platform.clientExpiresSoon, true)
    assert.equal(h.status, 'degraded')
    const metrics = await s.api({ method: 'GET', url: '/metrics' })
    assert.match(metrics.body, new RegExp(`^status_tracker_client_expiry_timestamp_seconds ${t3}$`, 'm'))
  })

  await t.test('an <ack refresh_lid> for a one-to-one message makes the service query the LID again and store the new one', async () => {
    // the service learns A's LID by posting to it (a usync <lid/> query)
    const res = await s.api({ method: 'POST', url: '/api/sessions/n/send-status', payload: { type: 'text', content: 'hello', targetNumbers: A } })
    assert.equal(res.statusCode, 200, res.body)
    const before = s.emu.getContact(A).lid
    assert.equal(await waitFor(async () => await storedLid(s, A), 10_000, 'the first mapping'), before)
    // a refresh_lid on a status@broadcast ack is not one (whatsapp-rust #1313): nothing is asked
    const after = s.emu.changeLid(A).lid
    assert.notEqual(after, before)
    s.emu.sendRefreshLidAck(OWN, { from: 'status@broadcast' })
    s.emu.sendRefreshLidAck(OWN, { from: `${A}@s.whatsapp.net` })
    assert.equal(await waitFor(async () => { const lid = await storedLid(s, A); return lid === after ? lid : undefined }, 10_000, 'the refreshed mapping'), after)
    // an ack naming the peer by its (stale) LID: the number is found through the stored mapping, then asked about
    const third = s.emu.changeLid(A).lid
    s.emu.sendRefreshLidAck(OWN, { from: `${after}@lid` })
    assert.equal(await waitFor(async () => { const lid = await storedLid(s, A); return lid === third ? lid : undefined }, 10_000, 'the mapping refreshed from a LID ack'), third)
  })

  await t.test('a <stream:error code="429"> shows as rate-limited and the reconnect waits three more rungs of the ladder (8 s or more)', async () => {
    const since = s.events.mark()
    const closedAt = Date.now()
    s.emu.fault(OWN, 'rate-limited')
    const closed = await s.events.first('connection-status', (e) => e.sessionId === 'n' && e.status === 'close', since, 10_000)
    assert.equal(closed.reason, 'rate-limited')
    await s.events.first('connection-status', (e) => e.sessionId === 'n' && e.status === 'open', since, 60_000)
    // the base is 1 s: a plain drop reconnects after 1-1.25 s, a 429 after 2^3 times that (a lower bound only)
    assert.ok(Date.now() - closedAt >= 7_900, `reconnected after ${Date.now() - closedAt} ms`)
  })
})
