import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createPacer, type PacerOptions } from '../../plugins/session-supervisor/pacer.js'
import type { EventLoopUtilization } from 'node:perf_hooks'
import { sleep, waitFor } from '../support/wait.js'

// The paced start's queue (plugins/session-supervisor/pacer.ts) with stand-in handshakes: each session's
// handshake is over when the test says so. The real sockets: paced-start.test.ts.

function handshakes (over: Partial<PacerOptions> = {}) {
  const started: string[] = []
  const open = new Map<string, () => void>()
  const errors: string[] = []
  let peak = 0
  const pacer = createPacer({
    concurrency: 3,
    jitterMs: 0,
    settleMs: 60_000,
    start: async (id) => { started.push(id) },
    settled: async (id) => {
      await new Promise<void>((resolve) => { open.set(id, resolve) })
      open.delete(id)
    },
    onError: (_err, id) => { errors.push(id) },
    ...over
  })
  const track = setInterval(() => { peak = Math.max(peak, pacer.progress().opening) }, 1)
  return {
    pacer,
    started,
    errors,
    peak: () => peak,
    /** ends the handshake of every session holding a place now */
    finishAll: () => { for (const done of [...open.values()]) done() },
    finish: (id: string) => { open.get(id)?.() },
    holding: () => [...open.keys()],
    stop: () => { clearInterval(track); pacer.close() }
  }
}

test('never more handshakes at once than the limit; each next one starts as one ends, in the order handed over', async (t) => {
  const h = handshakes()
  t.after(h.stop)
  const ids = Array.from({ length: 10 }, (_, i) => `s${i}`)
  h.pacer.add(ids)
  await waitFor(() => h.holding().length === 3, 2000, 'three handshakes')
  assert.deepEqual(h.pacer.progress(), { waiting: 7, opening: 3 })
  assert.deepEqual(h.started, ['s0', 's1', 's2'])
  h.finish('s1')
  await waitFor(() => h.started.length === 4, 2000, 'the fourth start')
  assert.equal(h.started[3], 's3')
  assert.deepEqual(h.pacer.progress(new Set(['s0', 's9', 'x'])), { waiting: 1, opening: 1 }, 'counted for some sessions only')
  const idle = h.pacer.idle()
  while (h.started.length < 10 || h.holding().length > 0) {
    h.finishAll()
    await sleep(2)
  }
  await idle
  assert.deepEqual(h.started, ids)
  assert.equal(h.peak(), 3)
  assert.deepEqual(h.pacer.progress(), { waiting: 0, opening: 0 })
})

test('sessions added with a limit of their own (a takeover) start up to it; those behind them keep the start\'s limit', async (t) => {
  const h = handshakes()
  t.after(h.stop)
  const taken = Array.from({ length: 8 }, (_, i) => `t${i}`)
  h.pacer.add(taken, 6)
  h.pacer.add(['s0', 's1'])
  await waitFor(() => h.holding().length === 6, 2000, 'six handshakes')
  await sleep(20)
  assert.deepEqual(h.started, taken.slice(0, 6), 'six at once, not the start\'s three')
  // the last two taken ones go as places free; the start's sessions wait until fewer than three are under way
  h.finish('t0')
  h.finish('t1')
  await waitFor(() => h.started.length === 8, 2000, 'the other two taken')
  h.finish('t2')
  h.finish('t3')
  h.finish('t4')
  await sleep(20)
  assert.equal(h.started.length, 8, 'three still under way: no start of the start\'s own')
  h.finish('t5')
  await waitFor(() => h.started.includes('s0'), 2000, 's0 once two are under way')
  assert.deepEqual(h.pacer.progress(), { waiting: 1, opening: 3 })
})

test('a session handed over twice is opened once; a dropped one is not opened; a failed start gives its place up', async (t) => {
  const h = handshakes({
    concurrency: 1,
    start: async (id) => { if (id === 'bad') throw new Error('no'); h.started.push(id) }
  })
  t.after(h.stop)
  h.pacer.add(['a', 'a', 'bad', 'b', 'c'])
  await waitFor(() => h.holding().includes('a'), 2000, 'a')
  h.pacer.add(['a'])
  await h.pacer.drop('b')
  assert.deepEqual(h.pacer.progress(), { waiting: 2, opening: 1 })
  h.finish('a')
  await waitFor(() => h.holding().includes('c'), 2000, 'c after the failed start')
  assert.deepEqual(h.errors, ['bad'])
  assert.deepEqual(h.started, ['a', 'c'])
})

test('the first wave waits a random pause up to the jitter; the handshakes after it start at once', async (t) => {
  const rolls = [0.99, 0.5, 0]
  const h = handshakes({ concurrency: 3, jitterMs: 300, random: () => rolls.shift() ?? 0.99 })
  t.after(h.stop)
  const t0 = performance.now()
  const at = new Map<string, number>()
  const pacer = h.pacer
  pacer.add(['j0', 'j1', 'j2', 'j3'])
  await waitFor(() => h.started.length === 3, 2000, 'the first wave')
  for (const id of h.started) at.set(id, performance.now() - t0)
  assert.deepEqual(h.started, ['j2', 'j1', 'j0'], 'started in the order of their pauses (0, 150, 297 ms)')
  assert.ok((at.get('j0') ?? 0) >= 250, `the longest pause was waited (${at.get('j0')} ms)`)
  const before = performance.now()
  h.finish('j1')
  await waitFor(() => h.started.length === 4, 2000, 'the next one')
  assert.ok(performance.now() - before < 200, 'no pause after the first wave')
})

test('close ends the pauses and starts nothing more', async (t) => {
  const h = handshakes({ concurrency: 2, jitterMs: 10_000, random: () => 0.99 })
  t.after(h.stop)
  h.pacer.add(['x', 'y', 'z'])
  const idle = h.pacer.idle()
  h.pacer.close()
  await idle
  await sleep(20)
  assert.deepEqual(h.started, [])
})

test('a large start waits for a quiet event loop between handshakes; its last few, a takeover and a busy loop past maxMs do not', async (t) => {
  let busy = true
  const loop = (from?: EventLoopUtilization): EventLoopUtilization => ({ idle: 0, active: 0, utilization: from !== undefined && busy ? 1 : 0 })
  const h = handshakes({ concurrency: 2, brake: { from: 2, windowMs: 5, busiest: 0.5, maxMs: 60_000 }, utilization: loop })
  t.after(h.stop)
  h.pacer.add(['b0', 'b1', 'b2', 'b3', 'b4', 'b5'])
  await sleep(60)
  assert.deepEqual(h.started, [], 'nothing starts while the loop is busy')
  assert.deepEqual(h.pacer.progress(), { waiting: 4, opening: 2 }, 'the braked ones hold their places')
  busy = false
  await waitFor(() => h.started.length === 2, 2000, 'the braked starts once the loop is quiet')
  busy = true
  h.finish('b0')
  h.finish('b1')
  await sleep(60)
  // the two places of a pair each wait for the loop on their own, so either may begin first (once in a whole
  // npm test b3 began before b2): the order is checked pair by pair
  const pairs = (): string[][] => [h.started.slice(0, 2), h.started.slice(2, 4), h.started.slice(4, 6)].map((p) => [...p].sort())
  assert.deepEqual(pairs(), [['b0', 'b1'], [], []], 'braked again while 2 or more wait')
  busy = false
  await waitFor(() => h.started.length === 4, 2000, 'b2 and b3')
  busy = true
  h.finishAll()
  // b4 and b5 start with fewer than 2 waiting behind them: no brake
  await waitFor(() => h.started.length === 6, 2000, 'the last two without the brake')
  assert.deepEqual(pairs(), [['b0', 'b1'], ['b2', 'b3'], ['b4', 'b5']])
  // a takeover's sessions (a limit of their own) are not braked, however many wait
  h.finishAll()
  h.pacer.add(['t0', 't1', 't2', 't3', 't4'], 5)
  await waitFor(() => h.started.length === 11, 2000, 'the takeover starts')
})

test('the brake gives up after maxMs, and close ends it', async (t) => {
  const loop = (from?: EventLoopUtilization): EventLoopUtilization => ({ idle: 0, active: 0, utilization: from !== undefined ? 1 : 0 })
  const h = handshakes({ concurrency: 1, brake: { from: 1, windowMs: 5, busiest: 0.5, maxMs: 80 }, utilization: loop })
  t.after(h.stop)
  const t0 = performance.now()
  h.pacer.add(['m0', 'm1'])
  await waitFor(() => h.started.length === 1, 2000, 'the start past maxMs')
  assert.ok(performance.now() - t0 >= 75, `waited maxMs (${(performance.now() - t0).toFixed(0)} ms)`)
  const slow = handshakes({ concurrency: 1, brake: { from: 1, windowMs: 5, busiest: 0.5, maxMs: 60_000 }, utilization: loop })
  t.after(slow.stop)
  slow.pacer.add(['c0', 'c1'])
  const idle = slow.pacer.idle()
  await sleep(30)
  slow.pacer.close()
  await idle
  await sleep(20)
  assert.deepEqual(slow.started, [], 'closed while braking: nothing starts')
})
