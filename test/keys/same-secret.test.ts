import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sameSecret } from '../../plugins/keys/store.js'

// The admin key is compared without hashing (issue 25): equal only when every character and the length match.
test('sameSecret: equal strings only, whatever the candidate\'s length or where it differs', () => {
  const key = 'bench-api-key-0123456789abcdef'
  assert.equal(sameSecret(key, key), true)
  assert.equal(sameSecret(`${key}`.slice(0), key), true)
  for (const other of ['', key.slice(0, -1), `${key}0`, `x${key.slice(1)}`, `${key.slice(0, -1)}x`, key.toUpperCase(), `${key}\u0000`, 'b']) {
    assert.equal(sameSecret(other, key), false, JSON.stringify(other))
  }
  assert.equal(sameSecret('', ''), true)
  assert.equal(sameSecret('a', ''), false)
})
