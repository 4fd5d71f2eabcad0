import { test } from 'node:test'
import { benchSmoke } from './smoke-run.js'

// `npm run bench` in smoke mode, part 2 of 4 (test/bench/smoke-run.ts): `reads` (1 s of autocannon per
// route, beside the Express control, the plain peer and the bare Fastify app), `insights` (500 contacts over
// 9 days) and `cluster` (one node, then two, on PostgreSQL and Redis), two at a time. Checks that the
// scripts complete and report every figure; the values mean nothing here.

const FIGURES = [
  'reads.health.rps', 'reads.health.p99', 'reads.health.ratio', 'reads.health.bare-ratio', 'reads.health.peer-ratio',
  'reads.list.rps', 'reads.list.p99', 'reads.list.ratio', 'reads.list.peer-ratio', 'reads.reach.ratio', 'reads.reach.wide-ratio', 'reads.bare.rps',
  'insights.overview.p99', 'insights.contacts.p99',
  'cluster.health.one.rps', 'cluster.health.two.rps', 'cluster.receipts.one.rps', 'cluster.receipts.two.rps'
]

test('npm run bench in smoke mode, reads, insights and cluster: each completes and prints its figures', { timeout: 420_000 }, async (t) => {
  await benchSmoke(t, ['reads', 'insights', 'cluster'], FIGURES)
})
