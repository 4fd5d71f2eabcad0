import assert from 'node:assert/strict'
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { form, png } from '../uploads/fixtures.js'
import { TEST_API_KEY } from '../helper.js'

// Issue 12, point 1: the database holds every linked account's private keys, so the data directory is
// 0700 and the database, -wal and -shm files 0600 (tightened, and logged, when they exist with wider
// modes); the upload directory 0700, uploaded files 0600.

const mode = (path: string) => statSync(path).mode & 0o777

async function start (t: { after: (fn: () => unknown) => void }, dir: string) {
  const config = loadConfig({ API_KEY: TEST_API_KEY, DATA_DIR: join(dir, 'data'), UPLOAD_DIR: join(dir, 'uploads'), WA_WEBSOCKET_URL: 'ws://127.0.0.1:9/ws/chat' }, { envFile: false })
  const lines: Array<Record<string, unknown>> = []
  const app = await buildApp(config, { logger: { level: 'info', stream: { write: (l: string) => { lines.push(JSON.parse(l) as Record<string, unknown>) } } } })
  t.after(async () => { await app.close() })
  await app.ready()
  return { app, config, lines }
}

test('file modes: a fresh start creates the data and upload folders 0700, the database files and uploads 0600', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-modes-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const old = process.umask(0o022)
  t.after(() => { process.umask(old) })
  const { app, config } = await start(t, dir)
  // a write so that the WAL and shared-memory files exist
  const created = await app.inject({ method: 'POST', url: '/api/sessions', headers: { 'x-api-key': TEST_API_KEY }, payload: { sessionId: 'm', sessionName: 'M', authMethod: 'qrcode' } })
  assert.equal(created.statusCode, 200, created.body)
  assert.equal(mode(config.dataDir), 0o700, 'data dir')
  for (const suffix of ['', '-wal', '-shm']) {
    assert.ok(existsSync(config.databaseFile + suffix), suffix)
    assert.equal(mode(config.databaseFile + suffix), 0o600, `database${suffix}`)
  }
  assert.equal(mode(config.uploadDir), 0o700, 'upload dir')
  const { payload, headers } = form({ field: 'image', filename: 'a.png', type: 'image/png', data: png() })
  const up = await app.inject({ method: 'POST', url: '/api/upload-image', payload, headers: { ...headers, 'x-api-key': TEST_API_KEY } })
  assert.equal(up.statusCode, 200, up.body)
  const files = readdirSync(config.uploadDir)
  assert.equal(files.length, 1)
  assert.equal(mode(join(config.uploadDir, files[0])), 0o600, 'uploaded file')
})

test('file modes: wider modes left by an older version are tightened at start, and logged', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-modes-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const first = await start(t, dir)
  await first.app.inject({ method: 'POST', url: '/api/sessions', headers: { 'x-api-key': TEST_API_KEY }, payload: { sessionId: 'm', sessionName: 'M', authMethod: 'qrcode' } })
  // an upload with its row (a file without one is removed at start: see the upload reconciliation)
  const { payload, headers } = form({ field: 'image', filename: 'old.png', type: 'image/png', data: png() })
  const up = await first.app.inject({ method: 'POST', url: '/api/upload-image', payload, headers: { ...headers, 'x-api-key': TEST_API_KEY } })
  const old: string = up.json().filename
  await first.app.close()
  const { dataDir, databaseFile, uploadDir } = first.config
  writeFileSync(databaseFile + '-wal', '')
  writeFileSync(databaseFile + '-shm', Buffer.alloc(0))
  chmodSync(dataDir, 0o755)
  for (const f of [databaseFile, databaseFile + '-wal', databaseFile + '-shm']) chmodSync(f, 0o644)
  chmodSync(uploadDir, 0o777)
  chmodSync(join(uploadDir, old), 0o666)

  const { lines } = await start(t, dir)
  assert.equal(mode(dataDir), 0o700)
  for (const suffix of ['', '-wal', '-shm']) assert.equal(mode(databaseFile + suffix), 0o600, `database${suffix}`)
  assert.equal(mode(uploadDir), 0o700)
  assert.equal(mode(join(uploadDir, old)), 0o600)
  const warned = lines.filter((l) => l.level === 40 && /tightened/i.test(String(l.msg)))
  const paths = warned.map((l) => String(l.path))
  for (const p of [dataDir, databaseFile, uploadDir]) assert.ok(paths.includes(p), `logged ${p}: ${JSON.stringify(warned)}`)
})
