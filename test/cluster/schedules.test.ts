import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startEmulator, testCertPaths } from '@status-tracker/emulator'
import { openPostgres } from '../../src/db/connection.js'
import { scheduleStore } from '../../src/db/stores/schedules.js'
import { waitFor } from '../helper.js'
import { startPostgres } from '../support/postgres.js'
import { nodeApi, ownership, planNode, startNode } from './nodes.js'

// Scheduled statuses on two nodes (real processes) sharing one PostgreSQL (issue 24): every node looks at
// every due schedule once a second, and each run fires exactly once between them, posted by the node that
// holds the session. The claim itself: many nodes' takeRun racing for one run, only one wins.

interface Schedule { state: string, runs: Array<{ at: string, state: string, statusId: string | null }> }

test('two nodes on PostgreSQL fire each scheduled run once between them', { timeout: 200_000 }, async (t) => {
  const emu = await startEmulator({ tls: testCertPaths() })
  t.after(async () => { await emu.stop() })
  const postgres = await startPostgres()
  t.after(async () => { await postgres.stop() })
  const databaseUrl = await postgres.createDatabase()
  const dir = mkdtempSync(join(tmpdir(), 'st-cluster-sched-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const env = {
    DATABASE_URL: databaseUrl,
    UPLOAD_DIR: join(dir, 'shared-uploads'),
    WA_WEBSOCKET_URL: emu.wsUrl,
    WA_TEST_TRUST_ROOT: emu.rootPublicKey,
    NODE_EXTRA_CA_CERTS: emu.caFile,
    SCHEDULE_ALLOW_SECONDS: 'true'
  }
  const a = await startNode(t, await planNode(dir, 'node-a'), env)
  const b = await startNode(t, await planNode(dir, 'node-b'), env)

  const sessions = [{ sessionId: 'c1', number: '15559100001', via: a }, { sessionId: 'c2', number: '15559100002', via: b }]
  for (const { sessionId, number, via } of sessions) {
    emu.createAccount(number)
    const api = nodeApi(via.base)
    await api.post('/sessions', { sessionId, sessionName: sessionId, authMethod: 'qrcode' })
    const qr = await waitFor(async () => (await api.get<{ qrCode: string | null }>(`/sessions/${sessionId}/qr-code`)).qrCode, 30_000, `QR of ${sessionId}`)
    await emu.scan(number, qr)
    await waitFor(async () => (await api.get<{ connected: boolean }>(`/sessions/${sessionId}/connection-status`)).connected, 30_000, `${sessionId} connected`)
  }
  const owners = await ownership(a.base)
  t.diagnostic(`owners: ${JSON.stringify(owners)}`)
  assert.equal(Object.values(owners).filter((s) => s.length > 0).length, 2, 'each node holds one session')
  const contact = emu.addContact({ number: '15559100011' })

  // both schedules made through node A: one of them belongs to B's session
  const api = nodeApi(a.base)
  const ids: Record<string, string> = {}
  for (const { sessionId } of sessions) {
    const created = await api.post<{ id: string }>(`/sessions/${sessionId}/scheduled-statuses`, {
      status: { type: 'text', content: `cluster ${sessionId}`, targetNumbers: contact.number },
      at: new Date(Date.now() + 2000).toISOString(),
      repeat: { every: 2, unit: 'seconds', count: 3 }
    })
    ids[sessionId] = created.id
  }
  for (const { sessionId } of sessions) {
    const done = await waitFor(async () => {
      const s = await nodeApi(b.base).get<Schedule>(`/sessions/${sessionId}/scheduled-statuses/${ids[sessionId]}`)
      return s.state === 'done' && s.runs.every((r) => r.state === 'fired') ? s : null
    }, 60_000, `the runs of ${sessionId}`)
    assert.equal(done.runs.length, 3)
    assert.equal(new Set(done.runs.map((r) => r.at)).size, 3)
  }
  for (const { sessionId } of sessions) {
    await waitFor(() => emu.statuses().filter((s) => s.text === `cluster ${sessionId}` && s.decrypted).length === 3, 20_000, `three posts of ${sessionId}`)
  }
  await new Promise((resolve) => setTimeout(resolve, 3000))
  for (const { sessionId } of sessions) assert.equal(emu.statuses().filter((s) => s.text === `cluster ${sessionId}`).length, 3, `no run of ${sessionId} posted twice`)
  const fired = await nodeApi(a.base).get<Array<{ id: string, content: string }>>('/sessions/c1/sent-statuses')
  assert.equal(fired.filter((s) => s.content === 'cluster c1').length, 3)

  // the claim: eight connections race for the same due run; exactly one takes it
  const due = Date.now() + 3_600_000
  await api.post(`/sessions/c1/scheduled-statuses`, { status: { type: 'text', content: 'race' }, at: new Date(due).toISOString() })
  const handles = await Promise.all(Array.from({ length: 8 }, async () => await openPostgres(databaseUrl, { max: 1 })))
  t.after(async () => { for (const h of handles) await h.close() })
  const row = await handles[0].db.selectFrom('schedules').select(['id', 'next_run_at']).where('body', 'like', '%"race"%').executeTakeFirstOrThrow()
  const won = await Promise.all(handles.map(async (h, i) => await scheduleStore(h.db).takeRun(row.id, row.next_run_at as number, null, { state: 'firing', firedAt: Date.now(), late: false, error: null, nodeId: `n${i}` }, Date.now())))
  assert.equal(won.filter((id) => id !== null).length, 1, `one winner: ${JSON.stringify(won)}`)
  const runs = await handles[0].db.selectFrom('schedule_runs').selectAll().where('schedule_id', '=', row.id).execute()
  assert.equal(runs.length, 1)
})
