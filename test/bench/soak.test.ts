import { spawn } from 'node:child_process'
import { resolve, join } from 'node:path'
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { nodeArgs } from '../support/processes.js'

// Issue 41's endurance run (bench/soak.ts) in its smoke variant: 3 linked sessions for 45 s of wall time holding
// 3 compressed days of 15 s (statuses expire, summaries and the event log and webhook outbox are pruned), the
// emulator ending every stream, contacts posting statuses, 3 statuses a day with 30 views each, a webhook
// receiver failing a third. It must stop by itself, lose no receipt it acked, take samples and compute a slope
// for every series. The figures' values mean nothing at this size.

const ROOT = resolve(import.meta.dirname, '..', '..')
const SERIES = ['rss', 'heapUsed', 'loopP99', 'handles', 'fds', 'sockets', 'dbUsed', 'dbFiles']
const FIGURES = ['soak.rss.slope', 'soak.receipts.lost', 'soak.health.p99-ratio', 'soak.list.p99-ratio', 'soak.db.ratio']

interface Summary {
  samples: number
  days: number
  slopes: Record<string, number | null>
  floorSlopes: { rss: number | null, heapUsed: number | null }
  tally: { posts: number, receipts: number, lost: number, unsettled: number, contactStatuses: number, streamEnds: number, errors: number }
  webhooks: { ok: number, failed: number }
  dayEnds: Array<{ used: number, files: number }>
}

test('the soak in smoke mode stops by itself, loses no acked receipt, samples every series and prints its figures', { timeout: 180_000 }, async (t) => {
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_SMOKE: '1', SOAK_MINUTES: '0.75' }
  delete env.NODE_V8_COVERAGE
  // compiled when this test runs compiled (npm test), as the processes it starts are
  const child = spawn(process.execPath, nodeArgs(join('bench', 'soak.ts')), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.after(() => { child.kill('SIGKILL') })
  let output = ''
  child.stdout.on('data', (c: Buffer) => { output += c.toString() })
  child.stderr.on('data', (c: Buffer) => { output += c.toString() })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  assert.equal(code, 0, `bench/soak.ts failed:\n${output.slice(-4000)}`)

  const line = output.split('\n').find((l) => l.startsWith('SOAK_SUMMARY '))
  assert.ok(line !== undefined, `no SOAK_SUMMARY line:\n${output.slice(-2000)}`)
  const s = JSON.parse(line.slice('SOAK_SUMMARY '.length)) as Summary
  assert.ok(s.tally.receipts > 0 && s.tally.posts > 0, `statuses were posted and viewed: ${JSON.stringify(s.tally)}`)
  assert.equal(s.tally.lost, 0, 'no receipt acked to the platform is missing from the service')
  assert.equal(s.tally.unsettled, 0, 'every status\'s receipts were acked')
  assert.ok(s.tally.contactStatuses > 0 && s.tally.streamEnds > 0, `contacts posted and streams were ended: ${JSON.stringify(s.tally)}`)
  assert.ok(s.webhooks.ok > 0 && s.webhooks.failed > 0, `the receiver took and refused deliveries: ${JSON.stringify(s.webhooks)}`)
  assert.ok(s.samples >= 10, `${s.samples} samples`)
  assert.deepEqual(Object.keys(s.slopes).sort(), [...SERIES].sort())
  for (const [k, v] of Object.entries(s.slopes)) assert.ok(typeof v === 'number' && Number.isFinite(v), `slope of ${k}: ${String(v)}`)
  for (const [k, v] of Object.entries(s.floorSlopes)) assert.ok(typeof v === 'number' && Number.isFinite(v), `floor slope of ${k}: ${String(v)}`)
  assert.equal(s.dayEnds.length, s.days)
  for (const d of s.dayEnds) assert.ok(d.used > 0 && d.files >= d.used, JSON.stringify(d))

  const figures = output.split('\n').filter((l) => l.startsWith('BENCH_FIGURE ')).map((l) => JSON.parse(l.slice(13)) as { id: string, value: number | null })
  assert.deepEqual(figures.map((f) => f.id), FIGURES)
  for (const f of figures) assert.ok(typeof f.value === 'number' && Number.isFinite(f.value), `${f.id} = ${String(f.value)}`)
})
