import { test } from 'node:test'
import { benchSmoke } from './smoke-run.js'

// `npm run bench` in smoke mode, part 4 of 4 (test/bench/smoke-run.ts): the `promise`, `link` and `start`
// parts of `scale` (BENCH_SCALE) with N = 2 and 4 sessions (the promise cost in fresh processes, linking one
// more with and without the shared-key-transactions trick) and a start with 3 stored sessions. Its
// `cluster` and `fleet` parts run in test/bench/smoke-cluster.test.ts.

const FIGURES = [
  'scale.promise.shared.2', 'scale.promise.library.2', 'scale.promise.shared.4', 'scale.promise.library.4', 'scale.promise.flat',
  'scale.link-one-more.2', 'scale.link-one-more.4', 'scale.link-one-more.flat',
  'scale.start.all-open.3', 'scale.start.health-p99.3', 'scale.start.stats-p99.3'
]

test('npm run bench in smoke mode, scale\'s promise, link and start parts: each completes and prints its figures', { timeout: 420_000 }, async (t) => {
  await benchSmoke(t, ['scale'], FIGURES, { BENCH_SCALE: 'promise,link,start' })
})
