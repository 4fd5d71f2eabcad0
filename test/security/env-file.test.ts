import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { loadConfig } from '../../src/config.js'

// Issue 12, point 7: `.env` is read with Node's own parser, so quotes and comments mean what they mean
// everywhere else (`API_KEY="abc…" # comment` is the key abc…, without quotes).

test('.env: quoted values with trailing comments lose their quotes and the comment', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-envfile-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const envFile = join(dir, '.env')
  const key = 'abcdefghijklmnopqrstuvwxyz012345'
  writeFileSync(envFile, [
    `API_KEY="${key}" # the key for the dashboard`,
    `DATA_DIR='${dir}'   # single quotes`,
    'HOST=127.0.0.1 # plain value, comment',
    'UPLOAD_DIR="/tmp/with # hash inside quotes"',
    'WA_VERSION=`2.3000.1` # backticks',
    'LOG_LEVEL = "warn"',
    'export PORT=4010',
    ''
  ].join('\n'))
  const c = loadConfig({}, { envFile })
  assert.equal(c.apiKey, key)
  assert.equal(c.apiKeySource, 'env')
  assert.equal(c.dataDir, dir)
  assert.equal(c.host, '127.0.0.1')
  assert.equal(c.uploadDir, '/tmp/with # hash inside quotes')
  assert.deepEqual(c.wa.version, [2, 3000, 1])
  assert.equal(c.logLevel, 'warn')
  assert.equal(c.port, 4010)
})

test('.env: the real environment still wins, and an empty real value does not erase the file\'s', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-envfile-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const envFile = join(dir, '.env')
  writeFileSync(envFile, `API_KEY="from-the-file-0123456789" # c\nDATA_DIR=${dir}\nPORT=4011\n`)
  const c = loadConfig({ PORT: '4012', API_KEY: '' }, { envFile })
  assert.equal(c.port, 4012)
  assert.equal(c.apiKey, 'from-the-file-0123456789')
})
