import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import type { MultipartFile } from '@fastify/multipart'
import { safeName } from '../../plugins/media-store/index.js'
import { sniff } from '../../src/media/sniff.js'
import { build, sqliteOf } from '../helper.js'
import { assertNothingStored, filesIn, form, jpeg, local, mp4, png, uploadRows } from './fixtures.js'
import { dbOf } from '../support/db.js'

const PNG_TYPE = sniff(png())
const MP4_TYPE = sniff(mp4())
const JPEG_TYPE = sniff(jpeg())

/** A multipart file part as @fastify/multipart hands it over, fed from `chunks` (an Error chunk breaks the stream). */
function part (chunks: Array<Buffer | Error>, opts: { filename?: string, mimetype?: string, truncated?: boolean } = {}): MultipartFile {
  const stream = Readable.from((async function* () {
    for (const c of chunks) {
      if (c instanceof Error) throw c
      yield c
    }
  })())
  const file = Object.assign(stream, { truncated: opts.truncated ?? false, bytesRead: 0 })
  return { type: 'file', fieldname: 'image', filename: opts.filename ?? 'a.png', encoding: '7bit', mimetype: opts.mimetype ?? 'image/png', file, fields: {}, toBuffer: async () => Buffer.alloc(0) } as unknown as MultipartFile
}

test('safeName keeps a clean basename and fixes the extension from the content', () => {
  assert.ok(PNG_TYPE !== null && MP4_TYPE !== null && JPEG_TYPE !== null)
  const cases: Array<[string, typeof PNG_TYPE, string]> = [
    ['photo.png', PNG_TYPE, 'photo.png'],
    ['Photo.PNG', PNG_TYPE, 'Photo.png'],
    ['../../etc/passwd.png', PNG_TYPE, 'passwd.png'],
    ['..\\..\\boot.ini', PNG_TYPE, 'boot.png'],
    ['C:\\Users\\me\\My Pictures\\cat pic.jpeg', JPEG_TYPE, 'cat_pic.jpeg'],
    ['me.jfif', JPEG_TYPE, 'me.jfif'],
    ['fake.gif', PNG_TYPE, 'fake.png'],
    ['script.php', PNG_TYPE, 'script.png'],
    ['clip', MP4_TYPE, 'clip.mp4'],
    ['my.holiday', PNG_TYPE, 'my.holiday.png'],
    ['a..b...png', PNG_TYPE, 'a.b.png'],
    ['...', PNG_TYPE, 'upload.png'],
    ['.png', PNG_TYPE, 'upload.png'],
    ['', MP4_TYPE, 'upload.mp4'],
    ['x\u0000y;rm -rf $(z).png', PNG_TYPE, 'x_y_rm_-rf___z_.png'],
    ['ok.part', PNG_TYPE, 'ok.png']
  ]
  for (const [original, type, expected] of cases) assert.equal(safeName(original, type), expected, JSON.stringify(original))
  const long = safeName('y'.repeat(1000) + '.' + '.'.repeat(50) + 'png', PNG_TYPE)
  assert.ok(long.length <= 105 && /^y+\.png$/.test(long), long)
  // the cut must not leave a dot before the extension (a `..` would make the name unresolvable)
  assert.equal(safeName('z'.repeat(99) + '.abcdefg.png', PNG_TYPE), 'z'.repeat(99) + '.png')
})

test('resolve answers a path only for a stored bare filename inside UPLOAD_DIR', async (t) => {
  const { app, dir } = await build(t)
  const store = local(app)
  assert.equal(store.dir, app.config.uploadDir)
  const name = '1700000000000-0123456789ab-photo.png'
  writeFileSync(join(store.dir, name), png())
  assert.equal(store.resolve(name), join(store.dir, name))

  writeFileSync(join(dir, 'secret.png'), 'outside')
  mkdirSync(join(store.dir, '1700000000000-0123456789ab-folder.png'))
  symlinkSync(join(dir, 'secret.png'), join(store.dir, '1700000000000-0123456789ab-link.png'))
  writeFileSync(join(store.dir, '.upload-0011223344556677.part'), 'partial')
  for (const bad of [
    '../x', '../secret.png', '..', '.', '', '/etc/passwd', join(store.dir, name), `./${name}`, `sub/${name}`, `..\\${name}`,
    `${name}\u0000`, '1700000000000-0123456789ab-..png', '1700000000000-0123456789ab-a/../../secret.png',
    '1700000000000-0123456789ab-unknown.png', 'photo.png', '.upload-0011223344556677.part',
    '1700000000000-0123456789ab-folder.png', '1700000000000-0123456789ab-link.png', 'x'.repeat(300)
  ]) {
    assert.equal(store.resolve(bad), null, JSON.stringify(bad))
  }
})

test('remove deletes the file and its row, and never reaches outside the folder', async (t) => {
  const { app, api, dir } = await build(t)
  const res = await api({ method: 'POST', url: '/api/upload-image', ...form({ field: 'image', filename: 'a.png', type: 'image/png', data: png() }) })
  const filename: string = res.json().filename
  assert.equal((await uploadRows(app)).length, 1)

  assert.equal(await app.mediaStore.remove(filename), true)
  await assertNothingStored(app)
  assert.equal(local(app).resolve(filename), null)
  assert.equal(await app.mediaStore.remove(filename), false)

  writeFileSync(join(dir, 'victim.png'), 'keep me')
  assert.equal(await app.mediaStore.remove('../victim.png'), false)
  assert.equal(await app.mediaStore.remove(join(dir, 'victim.png')), false)
  assert.ok(existsSync(join(dir, 'victim.png')))

  // a row whose file is already gone is still removed
  await dbOf(app).db.insertInto('uploads').values({ filename: '1700000000000-0123456789ab-gone.png', kind: 'image', mime_type: 'image/png', size: 1, created_at: Date.now() }).execute()
  assert.equal(await app.mediaStore.remove('1700000000000-0123456789ab-gone.png'), false)
  assert.deepEqual(await uploadRows(app), [])
})

test('start creates UPLOAD_DIR and removes stale .part files, keeping stored uploads', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-media-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const first = await build(t, {}, { keepDir: dir })
  const res = await first.api({ method: 'POST', url: '/api/upload-image', ...form({ field: 'image', filename: 'kept.png', type: 'image/png', data: png() }) })
  const kept: string = res.json().filename
  await first.app.close()
  const uploads = first.config.uploadDir
  writeFileSync(join(uploads, '.upload-0011223344556677.part'), 'half')
  writeFileSync(join(uploads, 'other.part'), 'half')
  const { app } = await build(t, {}, { keepDir: dir })
  assert.deepEqual(filesIn(uploads), [kept])
  assert.ok(local(app).resolve(kept) !== null)

  const nested = join(dir, 'not', 'yet', 'there')
  const second = await build(t, { UPLOAD_DIR: nested }, { keepDir: dir })
  assert.equal(local(second.app).dir, nested)
  assert.deepEqual(filesIn(nested), [])
})

test('start reconciles UPLOAD_DIR with the uploads table: a file without its row and a row without its file both go', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'st-media-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const first = await build(t, {}, { keepDir: dir })
  const upload = async (name: string): Promise<string> => (await first.api({ method: 'POST', url: '/api/upload-image', ...form({ field: 'image', filename: name, type: 'image/png', data: png() }) })).json().filename
  const kept = await upload('kept.png')
  const fileGone = await upload('file-gone.png')
  await first.app.close()
  const uploads = first.config.uploadDir
  // a crash between the rename and the commit: the file is in place, its row is not
  const orphan = '1700000000000-0123456789ab-orphan.png'
  writeFileSync(join(uploads, orphan), png())
  // a file removed behind the service's back (or a crash between unlink and row delete)
  rmSync(join(uploads, fileGone))
  // names the service never gives are not its business
  writeFileSync(join(uploads, 'README.txt'), 'not an upload')

  const lines: string[] = []
  const { app } = await build(t, { LOG_LEVEL: 'warn' }, { keepDir: dir, logStream: { write: (line: string) => { lines.push(line) } } })
  assert.deepEqual(filesIn(uploads).sort(), ['README.txt', kept].sort())
  assert.deepEqual((await uploadRows(app)).map((r) => r.filename), [kept])
  const logged = lines.map((l) => JSON.parse(l) as { msg: string, files?: string[] })
  assert.deepEqual(logged.find((l) => l.msg.startsWith('removed uploaded files that had no database row'))?.files, [orphan])
  assert.deepEqual(logged.find((l) => l.msg.startsWith('removed upload rows whose file is missing'))?.files, [fileGone])
})

test('save streams a file part to disk and records it', async (t) => {
  const { app } = await build(t)
  const data = png()
  const saved = await app.mediaStore.save(part([data.subarray(0, 5), data.subarray(5)], { filename: 'two-chunks' }), 'image')
  assert.deepEqual(saved, { filename: saved.filename, size: data.length, mimeType: 'image/png' })
  assert.match(saved.filename, /^[0-9]{13}-[0-9a-f]{12}-two-chunks\.png$/)
  assert.deepEqual(filesIn(app.config.uploadDir), [saved.filename])
})

test('save refuses and cleans up: wrong kind, truncated, broken stream, failed insert', async (t) => {
  const { app } = await build(t, { MAX_UPLOAD_MB: '1' })
  const store = app.mediaStore
  const refusals: Array<[string, () => Promise<unknown>, number, string]> = [
    ['a PNG saved as a video', async () => await store.save(part([png()], { mimetype: 'video/mp4' }), 'video'), 400, 'Only image and video files are allowed'],
    ['a video MIME on the image kind', async () => await store.save(part([mp4()], { mimetype: 'video/mp4' }), 'image'), 400, 'Only image and video files are allowed'],
    ['a part truncated by the multipart limit (image)', async () => await store.save(part([png()], { truncated: true }), 'image'), 413, 'File too large'],
    ['a part truncated by the multipart limit (video)', async () => await store.save(part([mp4()], { mimetype: 'video/mp4', truncated: true }), 'video'), 413, 'File size exceeds 1MB limit'],
    ['more bytes than the limit even if not flagged', async () => await store.save(part([png(), Buffer.alloc(1024 * 1024)]), 'image'), 413, 'File too large'],
    ['a stream that breaks off', async () => await store.save(part([png(), Buffer.alloc(70_000), new Error('aborted')]), 'image'), 400, 'Upload interrupted']
  ]
  for (const [what, run, statusCode, message] of refusals) {
    await assert.rejects(run, (err: Error & { statusCode?: number }) => err.statusCode === statusCode && err.message === message, what)
    await assertNothingStored(app, what)
  }

  sqliteOf(dbOf(app)).exec("create trigger refuse_uploads before insert on uploads begin select raise(abort, 'disk says no'); end")
  await assert.rejects(store.save(part([png()]), 'image'), /disk says no/)
  await assertNothingStored(app, 'after a failed insert')
})
