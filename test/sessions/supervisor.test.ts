import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { build } from '../helper.js'
import { dbOf } from '../support/db.js'

// The session supervisor (plugins/session-supervisor) on one node: at ready, every stored session is this
// node's; it is reopened and the sends a crash left `sending` are looked for. (In a cluster, the leased
// ones: test/cluster/forwarding.test.ts and two-nodes.test.ts.)

test('one node: at ready the supervisor resumes the sends a crash left sending, and reopens the stored session', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-supervisor-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const before = await build(t, {}, { keepDir: dir })
  const { db } = dbOf(before.app)
  await db.insertInto('sessions').values({ id: 's1', name: 's1', auth_method: 'qrcode', phone_number: null, own_number: null, own_lid: null, created_at: Date.now() }).execute()
  await db.insertInto('statuses').values({
    session_id: 's1', type: 'text', content: 'left behind', caption: '', message_id: 'MCRASHED1', state: 'sending', created_at: Date.now(),
    contact_count: 1, target_numbers: '15550001111', sent_count: 0, message_payload: Buffer.from('stored message'), media_file: null, background_color: null, font: null, error: null
  }).execute()
  await before.app.close()

  const lines: Array<{ msg?: string, count?: number, plugin?: string }> = []
  const after = await build(t, { LOG_LEVEL: 'warn' }, { keepDir: dir, logStream: { write: (line) => { lines.push(JSON.parse(line) as { msg?: string }) } } })
  // build() waited for ready: the supervisor's ready hook asked the statuses service already
  const found = lines.find((l) => l.msg === 'sends interrupted by a restart found; resuming once their sessions reconnect')
  assert.equal(found?.count, 1, JSON.stringify(lines))
  // and the platform is opening the stored session (it dials a closed port here: connecting, not open)
  const deadline = Date.now() + 10_000
  while (after.app.platform.snapshot('s1') === null) {
    assert.ok(Date.now() < deadline, 'the stored session was reopened')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
})
