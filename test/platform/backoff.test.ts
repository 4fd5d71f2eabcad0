import assert from 'node:assert/strict'
import { test } from 'node:test'
import { backoffDelay } from '../../src/platform/async.js'

test('reconnect backoff doubles from the base, adds up to 25 % jitter and stays under the cap', () => {
  const low = (n: number): number => backoffDelay(n, 1000, 60_000, () => 0)
  const high = (n: number): number => backoffDelay(n, 1000, 60_000, () => 1)
  assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7].map(low), [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000])
  assert.deepEqual([0, 1, 5, 6, 40].map(high), [1250, 2500, 40_000, 60_000, 60_000])
  for (let i = 0; i < 100; i++) {
    const d = backoffDelay(2, 1000, 60_000)
    assert.ok(d >= 4000 && d <= 5000)
  }
})
