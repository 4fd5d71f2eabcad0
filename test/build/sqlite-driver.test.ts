import { spawnSync } from 'node:child_process'
import { resolve } from 'node:path'
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SQLITE_DRIVER_VERSION } from '../../src/db/sqlite/driver.js'

const ROOT = resolve(import.meta.dirname, '..', '..')

test('better-sqlite3 13 is used wherever N-API 10 exists (12 aborts on Node 24.19+), 12 on Node 20', () => {
  const major = Number(SQLITE_DRIVER_VERSION.split('.')[0])
  assert.equal(major, Number(process.versions.napi) >= 10 ? 13 : 12, `Node ${process.version}, N-API ${process.versions.napi}, better-sqlite3 ${SQLITE_DRIVER_VERSION}`)
})

test('the database, then a heavy module load, then close: the process exits cleanly', () => {
  // what the service does at start. On Node 24.19+ with better-sqlite3 12, the GC that loading Baileys
  // triggers collected the migrations' statements and the process died with SIGABRT
  // (RemoveEnvironmentCleanupHook, env != nullptr), every time
  const script = `
    import { mkdtempSync, rmSync } from 'node:fs'
    import { tmpdir } from 'node:os'
    import { join } from 'node:path'
    import { openDatabase } from './src/db/connection.ts'
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-driver-'))
    const handle = await openDatabase(join(dir, 'test.db'))
    await import('@whiskeysockets/baileys')
    handle.sqlite.prepare('select 1').get()
    await handle.close()
    rmSync(dir, { recursive: true, force: true })
    console.log('closed')
  `
  const env = { ...process.env }
  delete env.NODE_V8_COVERAGE
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, env, encoding: 'utf8', timeout: 90_000 })
  assert.equal(run.signal, null, run.stderr)
  assert.equal(run.status, 0, run.stderr)
  assert.equal(run.stdout.trim(), 'closed')
})
