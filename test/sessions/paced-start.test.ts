import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startEmulator, testCertPaths } from '@status-tracker/emulator'
import { emulatorApi, linkSessions, peakHandshakes, serviceApi } from '../support/clients.js'
import { tempDir } from '../support/processes.js'
import { API_KEY, spawnService, type ServiceProc } from '../support/service.js'
import { sleep, waitFor } from '../support/wait.js'

// Issue 33, the paced start: a service restarted over 30 stored linked sessions with SESSION_START_CONCURRENCY=4
// (a real child process, real Baileys against the emulator) reconnects them at most 4 handshakes at a time, as
// the emulator saw the connections (opened → logged in), and as GET /api/stats reports it; all 30 open in the
// end, and /api/health answers all along.

const N = 30
const LIMIT = 4

interface StartProgress { concurrency: number, waiting: number, opening: number }
interface Stats { totalSessions: number, connectedSessions: number, start: StartProgress }

test('a start with 30 stored sessions and SESSION_START_CONCURRENCY=4: never more than 4 handshakes at once, all open, the API answering throughout', { timeout: 330_000 }, async (t) => {
  const emu = await startEmulator({ tls: testCertPaths() })
  t.after(async () => { await emu.stop() })
  const work = tempDir('st-paced-start-')
  t.after(() => { work.rm() })
  const procs: ServiceProc[] = []
  t.after(async () => { await Promise.all(procs.map(async (p) => await p.stop(2000))) })
  const start = async (name: string, env: Record<string, string> = {}): Promise<ServiceProc> => {
    const proc = await spawnService({ dir: work.path, name, emulator: { wsUrl: emu.wsUrl, rootPublicKey: emu.rootPublicKey, caFile: emu.caFile }, env })
    procs.push(proc)
    return proc
  }

  const first = await start('first')
  const specs = Array.from({ length: N }, (_, i) => ({ sessionId: `paced-${i}`, number: `1555700${String(i).padStart(4, '0')}` }))
  await linkSessions(serviceApi(first.base), emulatorApi(emu.controlUrl), specs)
  assert.equal(await first.stop(15_000), 0, 'the first service stopped cleanly')

  const since = Date.now()
  const svc = await start('second', { SESSION_START_CONCURRENCY: String(LIMIT), SESSION_START_JITTER_MS: '100' })
  const api = serviceApi(svc.base)

  // health polled on its own all along: every request answered 200
  const health: Array<{ status: number, ms: number }> = []
  let polling = true
  const healthPoll = (async () => {
    while (polling) {
      const t0 = performance.now()
      const res = await fetch(`${svc.base}/api/health`, { headers: { 'x-api-key': API_KEY }, signal: AbortSignal.timeout(30_000) })
      await res.arrayBuffer()
      health.push({ status: res.status, ms: performance.now() - t0 })
      await sleep(50)
    }
  })()

  const seen: Stats[] = []
  try {
    await waitFor(async () => {
      const stats = await api.get<Stats>('/stats')
      seen.push(stats)
      return stats.connectedSessions === N
    }, 240_000, `${N} sessions to open`, 50)
  } finally {
    polling = false
    await healthPoll
  }

  // what /api/stats said along the way
  assert.ok(seen.every((s) => s.totalSessions === N && s.start.concurrency === LIMIT), JSON.stringify(seen[0]))
  assert.ok(seen.every((s) => s.start.opening <= LIMIT), `opening over ${LIMIT}: ${JSON.stringify(seen.filter((s) => s.start.opening > LIMIT))}`)
  assert.ok(seen.some((s) => s.start.waiting > 0), 'sessions were seen waiting for their turn')
  const end = await waitFor(async () => {
    const stats = await api.get<Stats>('/stats')
    return stats.start.waiting === 0 && stats.start.opening === 0 ? stats : undefined
  }, 30_000, 'the paced start to be over')
  assert.equal(end.connectedSessions, N)

  // what the emulator saw: each account logged in again, never more than LIMIT handshakes at once
  const log = emu.connectionLog().filter((c) => Date.parse(c.openedAt) >= since)
  const loggedIn = new Set(log.filter((c) => c.loggedInAt !== null).map((c) => c.number))
  assert.equal(loggedIn.size, N, `accounts logged in after the restart: ${loggedIn.size}`)
  const peak = peakHandshakes(log)
  assert.ok(peak <= LIMIT, `${peak} handshakes at once (limit ${LIMIT})`)
  assert.ok(peak >= 2, `the handshakes overlapped (peak ${peak}): the start is paced, not one at a time`)

  assert.ok(health.length > 0 && health.every((h) => h.status === 200), `health answers: ${JSON.stringify(health.filter((h) => h.status !== 200))}`)
  const sorted = health.map((h) => h.ms).sort((a, b) => a - b)
  t.diagnostic(`health answered ${health.length} times during the start, p99 ${sorted[Math.floor(0.99 * (sorted.length - 1))].toFixed(1)} ms; peak handshakes ${peak}`)
})

test('the peak count sees overlapping handshakes (so the test above can fail)', () => {
  const at = (ms: number): string => new Date(1_000_000 + ms).toISOString()
  const entry = (id: number, open: number, login: number | null, close: number | null = null) =>
    ({ id, number: String(id), openedAt: at(open), loggedInAt: login === null ? null : at(login), closedAt: close === null ? null : at(close) })
  assert.equal(peakHandshakes([entry(1, 0, 10), entry(2, 10, 20), entry(3, 20, 30)]), 1, 'one after the other')
  assert.equal(peakHandshakes([entry(1, 0, 10), entry(2, 5, 20), entry(3, 6, null, 8)]), 3)
  assert.equal(peakHandshakes([entry(1, 0, null), entry(2, 1, 2)]), 2, 'still handshaking when the log was read')
})
