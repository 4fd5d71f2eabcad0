import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { test } from 'node:test'
import type { WASocket } from '@whiskeysockets/baileys'
import { pino } from 'pino'
import { awaitAck, chunk, isLinkLoss, isPushBack, StanzaRefused, withPushBackRetry } from '../../../src/platform/session/chunk-relay.js'
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

test('an error ack is push-back only for 429, 503 and rate-overlimit; 479, 463 and the rest are final', () => {
  for (const code of ['429', '503', 'rate-overlimit']) assert.equal(isPushBack(new StanzaRefused(code, 'status chunk 1/1')), true, code)
  for (const code of ['479', '463', '400', '500']) assert.equal(isPushBack(new StanzaRefused(code, 'status chunk 1/1')), false, code)
  assert.equal(new StanzaRefused('479', 'revoke chunk 2/3').message, 'the platform refused revoke chunk 2/3 (error 479)')
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

/** Enough of a Baileys socket for the link-loss and ack helpers. */
function fakeSock (open = true) {
  const ws = new EventEmitter() as EventEmitter & { isOpen: boolean }
  ws.isOpen = open
  const ev = new EventEmitter()
  return { ws, ev } as unknown as WASocket & { ws: typeof ws, ev: EventEmitter }
}

test('a lost link is EPIPE, ECONNRESET, 428, 515, a closed stream, or any error once the WebSocket is no longer open', () => {
  const open = fakeSock(true)
  assert.equal(isLinkLoss(open, Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })), true)
  assert.equal(isLinkLoss(open, Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })), true)
  assert.equal(isLinkLoss(open, boom('Connection Closed', 428)), true)
  assert.equal(isLinkLoss(open, boom('Stream Errored (restart required)', 515)), true)
  assert.equal(isLinkLoss(open, boom('rate-overlimit', 500, 429)), false)
  assert.equal(isLinkLoss(open, new Error('All encryptions failed')), false)
  assert.equal(isLinkLoss(fakeSock(false), new Error('All encryptions failed')), true)
})

test('awaitAck resolves on the ack for its id only, rejects when the socket closes first or on timeout', async () => {
  const sock = fakeSock()
  const a = awaitAck(sock, 'M1', 1000)
  sock.ws.emit('CB:ack,class:message', { attrs: { id: 'OTHER' } })
  assert.equal(a.received(), false)
  sock.ws.emit('CB:ack,class:message', { attrs: { id: 'M1', error: '479' } })
  await a.acked
  assert.equal(a.received(), true)
  assert.equal(sock.ws.listenerCount('CB:ack,class:message'), 0)

  const b = awaitAck(sock, 'M2', 1000)
  sock.ev.emit('connection.update', { connection: 'close' })
  await assert.rejects(b.acked, (err: Error & { output?: { statusCode?: number } }) => err.output?.statusCode === 428)
  await assert.rejects(awaitAck(sock, 'M3', 20).acked, /timed out after 20 ms/)
  assert.equal(sock.ev.listenerCount('connection.update'), 0)
})
