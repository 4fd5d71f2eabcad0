import { test } from 'node:test'
import { benchSmoke } from './smoke-run.js'

// `npm run bench` in smoke mode, part 3 of 4 (test/bench/smoke-run.ts): the `cluster` and `fleet` parts of
// `scale` (BENCH_SCALE): three nodes on PostgreSQL and Redis with 6 sessions, a join and a SIGKILL; the
// service and bare Baileys linking 3 accounts. The other parts of `scale` run in test/bench/smoke-scale.test.ts.
// (Beside the `cluster` script, in one run two at a time, its nodes timed out starting on a loaded machine.)

const FIGURES = [
  'scale.cluster.join.s', 'scale.cluster.join.spread', 'scale.cluster.double-owners', 'scale.cluster.failover.s', 'scale.cluster.failover.lost',
  'scale.fleet.memory.3', 'scale.fleet.bare-memory.3', 'scale.fleet.memory-ratio.3',
  'scale.fleet.receipts.ratio', 'scale.fleet.receipts.rate', 'scale.fleet.paced.p99'
]

test('npm run bench in smoke mode, scale\'s cluster and fleet parts: each completes and prints its figures', { timeout: 420_000 }, async (t) => {
  await benchSmoke(t, ['scale'], FIGURES, { BENCH_SCALE: 'cluster,fleet' })
})
