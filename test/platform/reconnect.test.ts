import assert from 'node:assert/strict'
import { test } from 'node:test'
import { afterClose, Backoff, closeReason, RATE_LIMIT_RUNGS, RATE_LIMITED } from '../../src/platform/session/reconnect.js'

// The reconnect ladder after a close (src/platform/session/reconnect.ts): a 429 ("back off", whatsapp-rust
// PR #353 / #1263 / #965) jumps RATE_LIMIT_RUNGS rungs and survives the next open; nothing here waits for a timer.

const quiet = { warn: () => {}, info: () => {}, debug: () => {}, error: () => {}, trace: () => {}, fatal: () => {}, child: () => quiet } as never
const boom = (statusCode: number, message: string): Error => Object.assign(new Error(message), { output: { statusCode } })

function delays (backoff: Backoff, codes: Array<number | undefined>): number[] {
  return codes.map((code) => {
    backoff.schedule(quiet, { reason: 'x', code }, () => {})
    backoff.cancel()
    return backoff.lastDelayMs ?? -1
  })
}

test('a plain drop starts the ladder at the base; a 429 starts it RATE_LIMIT_RUNGS doublings higher', () => {
  const base = 1000
  const [drop] = delays(new Backoff(base, 60_000), [undefined])
  assert.ok(drop >= base && drop <= base * 1.25, String(drop))
  const [limited] = delays(new Backoff(base, 60_000), [429])
  const floor = base * 2 ** RATE_LIMIT_RUNGS
  assert.ok(limited >= floor && limited <= floor * 1.25, String(limited))
})

test('after a 429 the next open does not reset the ladder; the open after that does', () => {
  const base = 100
  const backoff = new Backoff(base, 1_000_000)
  delays(backoff, [429])
  backoff.reset() // the socket opened: the penalty holds
  const [held] = delays(backoff, [undefined])
  assert.ok(held >= base * 2 ** (RATE_LIMIT_RUNGS + 1), String(held))
  backoff.reset()
  const [fresh] = delays(backoff, [undefined])
  assert.ok(fresh <= base * 1.25, String(fresh))
})

test('a 429 close is reported as rate-limited and backed off; other closes keep their message', () => {
  assert.equal(closeReason(boom(429, 'Stream Errored (429)')), RATE_LIMITED)
  assert.deepEqual(afterClose(boom(429, 'Stream Errored (429)'), true, false), { next: 'back-off', code: 429, reason: RATE_LIMITED })
  assert.equal(closeReason(boom(500, 'Stream Errored (unknown)')), 'Stream Errored (unknown)')
  assert.equal(closeReason(undefined), 'closed')
})
