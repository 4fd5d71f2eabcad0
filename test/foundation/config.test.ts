import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, loadConfig, parseEnvFile } from '../../src/config.js'

function tempDir (t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'st-config-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

test('defaults match the documented settings', (t) => {
  const dir = tempDir(t)
  const c = loadConfig({ DATA_DIR: dir }, { envFile: false })
  assert.equal(c.port, 3000)
  assert.equal(c.host, '0.0.0.0')
  assert.equal(c.maxUploadMb, 50)
  assert.equal(c.rateLimit.max, 300)
  assert.equal(c.rateLimit.windowMs, 900_000)
  assert.equal(c.statusTtlMs, 24 * 3_600_000)
  assert.equal(c.cleanupIntervalMs, 300_000)
  assert.equal(c.sendReconnectWaitMs, 60_000)
  assert.equal(c.sendWaitMaxRecipients, null, 'off: every send waits unless the request says wait: false')
  assert.equal(c.wa.linkTimeoutMs, 600_000)
  assert.equal(c.wa.statusChunkSize, 256)
  assert.equal(c.wa.testTrustRoot, null)
  assert.equal(c.wa.websocketUrl, 'wss://web.whatsapp.com/ws/chat')
  assert.equal(c.metricsPublic, false)
  assert.equal(c.corsOrigin, null)
  assert.equal(c.healthDisconnectedMs, 120_000)
  assert.deepEqual(c.media, { store: 'local' })
})

test('METRICS_PUBLIC, CORS_ORIGIN and HEALTH_DISCONNECTED_MS', (t) => {
  const dir = tempDir(t)
  const c = (env: Record<string, string>) => loadConfig({ DATA_DIR: dir, ...env }, { envFile: false })
  assert.equal(c({ METRICS_PUBLIC: 'true' }).metricsPublic, true)
  assert.equal(c({ CORS_ORIGIN: '*' }).corsOrigin, '*')
  assert.deepEqual(c({ CORS_ORIGIN: 'https://crm.example.com, http://localhost:8080' }).corsOrigin, ['https://crm.example.com', 'http://localhost:8080'])
  assert.equal(c({ HEALTH_DISCONNECTED_MS: '5000' }).healthDisconnectedMs, 5000)
  for (const [env, name] of [[{ METRICS_PUBLIC: 'yes' }, 'METRICS_PUBLIC'], [{ CORS_ORIGIN: 'crm.example.com' }, 'CORS_ORIGIN'], [{ CORS_ORIGIN: 'https://crm.example.com/path' }, 'CORS_ORIGIN'], [{ HEALTH_DISCONNECTED_MS: '10' }, 'HEALTH_DISCONNECTED_MS']] as const) {
    assert.throws(() => c(env), (err: unknown) => err instanceof ConfigError && err.message.startsWith(`Invalid setting ${name}`), JSON.stringify(env))
  }
})

test('without API_KEY a key is generated once into DATA_DIR/api-key with mode 0600', (t) => {
  const dir = tempDir(t)
  const first = loadConfig({ DATA_DIR: dir }, { envFile: false })
  assert.equal(first.apiKeySource, 'generated')
  assert.ok(first.apiKey.length >= 16)
  const file = join(dir, 'api-key')
  assert.equal(readFileSync(file, 'utf8').trim(), first.apiKey)
  assert.equal(statSync(file).mode & 0o777, 0o600)
  const second = loadConfig({ DATA_DIR: dir }, { envFile: false })
  assert.equal(second.apiKeySource, 'file')
  assert.equal(second.apiKey, first.apiKey)
})

test('invalid settings stop the start with a message naming the setting', (t) => {
  const dir = tempDir(t)
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ API_KEY: 'short' }, /^Invalid setting API_KEY: must be at least 16 characters$/],
    [{ PORT: 'eighty' }, /^Invalid setting PORT/],
    [{ PORT: '70000' }, /^Invalid setting PORT/],
    [{ MAX_UPLOAD_MB: '0' }, /^Invalid setting MAX_UPLOAD_MB/],
    [{ LOG_LEVEL: 'loud' }, /^Invalid setting LOG_LEVEL/],
    [{ WA_WEBSOCKET_URL: 'http://x' }, /^Invalid setting WA_WEBSOCKET_URL/],
    [{ STATUS_TTL_HOURS: '-1' }, /^Invalid setting STATUS_TTL_HOURS/],
    [{ WA_TEST_TRUST_ROOT: 'not-a-key' }, /^Invalid setting WA_TEST_TRUST_ROOT/]
  ]
  for (const [env, message] of cases) {
    const refused = (err: unknown) => err instanceof ConfigError && message.test(err.message)
    assert.throws(() => loadConfig({ DATA_DIR: dir, ...env }, { envFile: false }), refused, JSON.stringify(env))
  }
  // the key itself is never echoed back
  assert.throws(() => loadConfig({ DATA_DIR: dir, API_KEY: 'secretvalue' }, { envFile: false }), (err: unknown) => err instanceof Error && !err.message.includes('secretvalue'))
})

test('.env values apply under the real environment', (t) => {
  const dir = tempDir(t)
  const envFile = join(dir, '.env')
  writeFileSync(envFile, `# comment\nPORT=4001\nexport HOST="127.0.0.1"\nRATE_LIMIT_MAX=7 # inline\nDATA_DIR=${dir}\n`)
  const c = loadConfig({ PORT: '4002' }, { envFile })
  assert.equal(c.port, 4002)
  assert.equal(c.host, '127.0.0.1')
  assert.equal(c.rateLimit.max, 7)
  assert.deepEqual(parseEnvFile("A='x y'\nB=\nnot a line\n"), { A: 'x y', B: '' })
})

test('DATABASE_URL: postgres:// or postgresql:// selects PostgreSQL; anything else is refused without echoing the value', () => {
  const dir = mkdtempSync(join(tmpdir(), 'st-config-'))
  try {
    const base = { API_KEY: 'k'.repeat(20), DATA_DIR: dir }
    assert.equal(loadConfig(base, { envFile: false }).databaseUrl, null)
    assert.equal(loadConfig({ ...base, DATABASE_URL: '' }, { envFile: false }).databaseUrl, null)
    for (const url of ['postgres://u:p@127.0.0.1:5432/db', 'postgresql://u@localhost/db']) {
      assert.equal(loadConfig({ ...base, DATABASE_URL: url }, { envFile: false }).databaseUrl, url)
    }
    assert.throws(() => loadConfig({ ...base, DATABASE_URL: 'mysql://u:hunter2@host/db' }, { envFile: false }), (err: Error) => {
      assert.ok(err instanceof ConfigError)
      assert.match(err.message, /^Invalid setting DATABASE_URL/)
      assert.doesNotMatch(err.message, /hunter2/)
      return true
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('MEDIA_STORE=s3: the S3_* settings, S3_BUCKET required, the key pair set together, the secret never echoed', (t) => {
  const base = { API_KEY: 'k'.repeat(20), DATA_DIR: tempDir(t) }
  const secret = 'hunter2-s3-secret-value'
  const s3 = { ...base, MEDIA_STORE: 's3', S3_BUCKET: 'status-media' }
  assert.deepEqual(loadConfig(s3, { envFile: false }).media, {
    store: 's3',
    s3: { endpoint: null, bucket: 'status-media', region: 'us-east-1', credentials: null, forcePathStyle: false }
  })
  const full = loadConfig({ ...s3, S3_ENDPOINT: 'http://127.0.0.1:9000/', S3_REGION: 'eu-west-3', S3_ACCESS_KEY_ID: 'id', S3_SECRET_ACCESS_KEY: secret, S3_FORCE_PATH_STYLE: 'true' }, { envFile: false })
  assert.deepEqual(full.media, {
    store: 's3',
    s3: { endpoint: 'http://127.0.0.1:9000', bucket: 'status-media', region: 'eu-west-3', credentials: { accessKeyId: 'id', secretAccessKey: secret }, forcePathStyle: true }
  })
  // the S3_* settings mean nothing with the local store
  assert.deepEqual(loadConfig({ ...base, S3_BUCKET: 'status-media' }, { envFile: false }).media, { store: 'local' })
  const refused = (env: Record<string, string>, message: RegExp): void => {
    assert.throws(() => loadConfig(env, { envFile: false }), (err: Error) => {
      assert.ok(err instanceof ConfigError, String(err))
      assert.match(err.message, message)
      assert.doesNotMatch(err.message, /hunter2/)
      return true
    })
  }
  refused({ ...base, MEDIA_STORE: 's3' }, /^Invalid setting S3_BUCKET: required with MEDIA_STORE=s3/)
  refused({ ...base, MEDIA_STORE: 'disk' }, /^Invalid setting MEDIA_STORE/)
  refused({ ...s3, S3_SECRET_ACCESS_KEY: secret }, /^Invalid setting S3_ACCESS_KEY_ID: set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY together/)
  refused({ ...s3, S3_ACCESS_KEY_ID: 'id' }, /^Invalid setting S3_SECRET_ACCESS_KEY/)
  refused({ ...s3, S3_BUCKET: 'Not_A_Bucket' }, /^Invalid setting S3_BUCKET/)
  refused({ ...s3, S3_ENDPOINT: 'ftp://host' }, /^Invalid setting S3_ENDPOINT/)
})
