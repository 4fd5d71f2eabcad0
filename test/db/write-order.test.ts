import assert from 'node:assert/strict'
import { test } from 'node:test'
import { writeOrder } from '../../src/db/write-order.js'

test('write order: one key\'s writes run one after another in the order made; other keys do not wait', async () => {
  const writes = writeOrder()
  const log: string[] = []
  let release: () => void = () => {}
  const gate = new Promise<void>((resolve) => { release = resolve })
  const a1 = writes.run('a', async () => { log.push('a1 start'); await gate; log.push('a1 end') })
  const a2 = writes.run('a', async () => { log.push('a2') })
  await writes.run('b', async () => { log.push('b1') })
  assert.deepEqual(log, ['a1 start', 'b1'], 'a2 waits for a1; b does not')
  release()
  await Promise.all([a1, a2])
  assert.deepEqual(log, ['a1 start', 'b1', 'a1 end', 'a2'])
})

test('write order: a failed write reaches its caller and does not stop the next; idle waits for all', async () => {
  const writes = writeOrder()
  const failed = writes.run('a', async () => { throw new Error('boom') })
  let ran = false
  const next = writes.run('a', async () => { await new Promise((resolve) => setTimeout(resolve, 10)); ran = true })
  await assert.rejects(failed, /boom/)
  await writes.idle()
  assert.equal(ran, true, 'idle waited for the queued write')
  await next
})
