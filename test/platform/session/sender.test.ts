import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pino } from 'pino'
import { chunk, isPushBack, withPushBackRetry } from '../../../src/platform/session/sender.js'
import { argbFromHex } from '../../../src/platform/session/status-message.js'

// Pure helpers of the sender; the relay itself runs through real Baileys in platform.test.ts.

test('background colours: #RRGGBB is opaque, #AARRGGBB keeps its alpha, anything else is refused', () => {
  assert.equal(argbFromHex('#336699'), 0xff336699)
  assert.equal(argbFromHex('#80336699'), 0x80336699)
  assert.equal(argbFromHex('#00000000'), 0)
  assert.throws(() => argbFromHex('#12345'), /expected #RRGGBB or #AARRGGBB/)
  assert.throws(() => argbFromHex('red'), /invalid colour/)
})

test('chunks keep order and sizes', () => {
  const items = Array.from({ length: 601 }, (_, i) => i)
  const chunks = chunk(items, 256)
  assert.deepEqual(chunks.map((c) => c.length), [256, 256, 89])
  assert.deepEqual(chunks.flat(), items)
})

const boom = (message: string, statusCode: number, data?: unknown): Error =>
  Object.assign(new Error(message), { isBoom: true, output: { statusCode }, data })

test('push-back is rate limits, timeouts and a closing socket; the rest is not', () => {
  assert.equal(isPushBack(boom('rate-overlimit', 500, 429)), true)
  assert.equal(isPushBack(boom('Timed Out', 408)), true)
  assert.equal(isPushBack(boom('Connection Closed', 428)), true)
  assert.equal(isPushBack(boom('service-unavailable', 500, 503)), true)
  assert.equal(isPushBack(boom('All encryptions failed', 500)), false)
  assert.equal(isPushBack(new Error('bad-request')), false)
})

test('push-back is retried with backoff up to the attempt bound; other errors end at once', async () => {
  const policy = { chunkSize: 1, attempts: 3, retryBaseMs: 10, retryMaxMs: 20, ackTimeoutMs: 1000 }
  const logger = pino({ level: 'silent' })
  let calls = 0
  const value = await withPushBackRetry({ policy, logger, what: 'x' }, async () => {
    calls++
    if (calls < 3) throw boom('rate-overlimit', 500, 429)
    return 'ok'
  })
  assert.deepEqual([value, calls], ['ok', 3])

  calls = 0
  await assert.rejects(withPushBackRetry({ policy, logger, what: 'x' }, async () => { calls++; throw boom('rate-overlimit', 500, 429) }), /rate-overlimit/)
  assert.equal(calls, 3)

  calls = 0
  await assert.rejects(withPushBackRetry({ policy, logger, what: 'x' }, async () => { calls++; throw new Error('not-acceptable') }), /not-acceptable/)
  assert.equal(calls, 1)
})
