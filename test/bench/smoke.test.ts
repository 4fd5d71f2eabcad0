import { test } from 'node:test'
import { benchSmoke } from './smoke-run.js'

// `npm run bench` in smoke mode, part 1 of 4 (test/bench/smoke-run.ts): `memory`, `receipts`, `send-many`
// and `startup` with tiny sizes (2 sessions, 200 receipts, 20 recipients, 3 sessions at start), two at a
// time, with the controls measured beside them (bare Baileys). Checks that the scripts complete and report
// every figure; the values (and so the targets) mean nothing here. `reads`, `insights` and `cluster` run in
// test/bench/smoke-reads.test.ts, `scale` in smoke-scale.test.ts and smoke-cluster.test.ts.

const FIGURES = [
  'memory.per-session', 'memory.link-time',
  'receipts.burst.ratio', 'receipts.cpu.ratio', 'receipts.burst.rate', 'receipts.bare.rate', 'receipts.paced.p99', 'receipts.paced.p50',
  'receipts.paced.update-p99', 'receipts.memory.ratio',
  'send-many.first', 'send-many.again', 'send-many.bare', 'send-many.ratio', 'send-many.cpu-ratio', 'send-many.again-ratio',
  'startup.all-open', 'startup.http-ready'
]

test('npm run bench in smoke mode, memory, receipts, send-many and startup: each completes and prints its figures', { timeout: 420_000 }, async (t) => {
  await benchSmoke(t, ['memory', 'receipts', 'send-many', 'startup'], FIGURES)
})
