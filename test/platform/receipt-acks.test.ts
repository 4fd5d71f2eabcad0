import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { quietStacks } from '../../src/platform/receipt-acks.js'

// The window in which acks go without stack traces (Baileys captures them for errors it throws away): it
// never outlives the turn of the event loop that opened it, and nested windows end with the outer one.

test('stack traces are short inside the window and whole again when it ends', () => {
  const limit = Error.stackTraceLimit
  const restore = quietStacks()
  assert.equal(Error.stackTraceLimit, 0)
  assert.equal(new Error('inside').stack?.split('\n').length, 1, 'no frames captured')
  restore()
  assert.equal(Error.stackTraceLimit, limit)
  assert.ok((new Error('after').stack?.split('\n').length ?? 0) > 1, 'frames captured again')
  restore()
  assert.equal(Error.stackTraceLimit, limit, 'a second call changes nothing')
})

test('nested windows: the limit comes back when the last one ends, whatever the order', () => {
  const limit = Error.stackTraceLimit
  const outer = quietStacks()
  const inner = quietStacks()
  outer()
  assert.equal(Error.stackTraceLimit, 0, 'still inside the inner one')
  inner()
  assert.equal(Error.stackTraceLimit, limit)
})

test('a window nobody ends is ended at the next turn of the event loop', async () => {
  const limit = Error.stackTraceLimit
  quietStacks()
  quietStacks()
  await Promise.resolve()
  assert.equal(Error.stackTraceLimit, 0, 'microtasks of the same turn are inside')
  await nextTurn()
  assert.equal(Error.stackTraceLimit, limit)
})
