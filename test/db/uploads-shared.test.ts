import assert from 'node:assert/strict'
import { storesOf } from '../../src/db/stores/index.js'
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { reconcileUploads, SHARED_DIR_GRACE_MS } from '../../plugins/media-store/index.js'
import { build } from '../helper.js'
import { dialectEnv, dialectTest, openTestDb } from '../support/db-matrix.js'
import { filesIn, png } from '../uploads/fixtures.js'

// UPLOAD_DIR shared by several nodes (PostgreSQL): a node's start must not take another node's upload in
// progress for the leftovers of a crash. Fresh files stay; files untouched for the grace window go.

const HOUR = 60 * 60_000

function folder (): string {
  const dir = mkdtempSync(join(tmpdir(), 'st-shared-uploads-'))
  return dir
}

/** Writes a file and sets its modification time `ageMs` in the past. */
function put (dir: string, name: string, ageMs: number): void {
  writeFileSync(join(dir, name), png())
  const at = new Date(Date.now() - ageMs)
  utimesSync(join(dir, name), at, at)
}

dialectTest('reconcile with a grace window keeps files written to recently and removes the abandoned ones', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const uploads = storesOf(handle).uploads
  const dir = folder()
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const insert = async (filename: string): Promise<void> => {
    await handle.db.insertInto('uploads').values({ filename, kind: 'image', mime_type: 'image/png', size: png().length, created_at: Date.now() }).execute()
  }
  // another node mid-upload: its .part written to a second ago, and a file renamed just before its commit
  put(dir, '.upload-0000000000000001.part', 1000)
  put(dir, '1700000000001-0123456789ab-renamed.png', 1000)
  // a crashed node's leftovers, an hour old
  put(dir, '.upload-0000000000000002.part', HOUR)
  put(dir, '1700000000002-0123456789ab-orphan.png', HOUR)
  // a complete old upload with its row, and a row whose file is gone
  put(dir, '1700000000003-0123456789ab-kept.png', HOUR)
  await insert('1700000000003-0123456789ab-kept.png')
  await insert('1700000000004-0123456789ab-gone.png')

  const r = await reconcileUploads(dir, uploads, SHARED_DIR_GRACE_MS)
  assert.equal(r.parts, 1)
  assert.deepEqual(r.filesWithoutRow, ['1700000000002-0123456789ab-orphan.png'])
  assert.deepEqual(r.rowsWithoutFile, ['1700000000004-0123456789ab-gone.png'])
  assert.deepEqual(filesIn(dir).sort(), ['.upload-0000000000000001.part', '1700000000001-0123456789ab-renamed.png', '1700000000003-0123456789ab-kept.png'])

  // the other node's commit lands: its file is an upload like any other from now on
  await insert('1700000000001-0123456789ab-renamed.png')
  const again = await reconcileUploads(dir, uploads, SHARED_DIR_GRACE_MS)
  assert.deepEqual(again, { parts: 0, filesWithoutRow: [], rowsWithoutFile: [] })

  // without a grace window (one process owns the folder) fresh leftovers go too
  const alone = await reconcileUploads(dir, uploads, 0)
  assert.equal(alone.parts, 1)
  assert.deepEqual(filesIn(dir).sort(), ['1700000000001-0123456789ab-renamed.png', '1700000000003-0123456789ab-kept.png'])
})

dialectTest('a starting service spares fresh files in UPLOAD_DIR only when the folder can be shared (PostgreSQL)', async (t, dialect) => {
  const dir = folder()
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const uploads = join(dir, 'uploads')
  mkdirSync(uploads)
  put(uploads, '.upload-00000000000000aa.part', 1000)
  put(uploads, '1700000000005-0123456789ab-fresh.png', 1000)
  put(uploads, '1700000000006-0123456789ab-stale.png', HOUR)
  await build(t, await dialectEnv(dialect), { keepDir: dir })
  assert.equal(existsSync(join(uploads, '1700000000006-0123456789ab-stale.png')), false)
  assert.deepEqual(filesIn(uploads).sort(), dialect === 'sqlite' ? [] : ['.upload-00000000000000aa.part', '1700000000005-0123456789ab-fresh.png'])
})
