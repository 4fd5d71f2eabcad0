import { randomBytes } from 'node:crypto'
import { lstatSync, renameSync, rmSync } from 'node:fs'
import { lstat, mkdir, open, readdir, unlink } from 'node:fs/promises'
import { dirname, join, resolve as resolvePath } from 'node:path'
import { Transform, Writable, type TransformCallback } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import fp from 'fastify-plugin'
import type { MultipartFile } from '@fastify/multipart'
import type { FastifyBaseLogger } from 'fastify'
import type { Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'
import { BadRequest, FileTooLarge, NoFileUploaded, VideoTooLarge, WrongAudioType, WrongFileType } from '../../src/errors.js'
import { deleteUpload, uploadCommitterFor, type UploadCommit } from '../../src/db/repositories/uploads.js'
import { audioDetails } from '../../src/media/audio.js'
import { sniff, SNIFF_BYTES, type SniffedType } from '../../src/media/sniff.js'
import { extensionsOf, type MediaKind } from '../../src/media/types.js'
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, secureUploadDir } from '../../src/db/file-modes.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** uploaded media in UPLOAD_DIR, one `uploads` row per file */
    mediaStore: MediaStore
  }
}

export type MediaStore = ReturnType<typeof createMediaStore>

export interface MediaStoreOptions {
  dir: string
  db: Kysely<Database>
  /** commits a file's row with its rename (SQLite: one synchronous step; see uploadCommitterFor) */
  commitUpload: UploadCommit
  maxUploadBytes: number
  maxUploadMb: number
}

// `<Date.now()>-<12 hex>-<sanitized name>`; the name part never holds `..` (see safeName)
const STORED_NAME = /^[0-9]{1,16}-[0-9a-f]{12}-[A-Za-z0-9._-]{1,110}$/
const MAX_STEM = 100

export function createMediaStore (opts: MediaStoreOptions) {
  const dir = resolvePath(opts.dir)
  const { db, maxUploadBytes } = opts
  const { commitUpload } = opts
  const tooLarge = (kind: MediaKind) => kind === 'video' ? new VideoTooLarge(opts.maxUploadMb) : new FileTooLarge()
  // audio is an addition to the seed's two kinds: its refusal names its field and the formats accepted
  const wrongType = (kind: MediaKind) => kind === 'audio' ? new WrongAudioType() : new WrongFileType()

  async function save (file: MultipartFile, kind: MediaKind): Promise<{ filename: string, size: number, mimeType: string, seconds?: number }> {
    if (!declaredAs(file.mimetype, kind)) {
      await drain(file)
      throw wrongType(kind)
    }
    const part = join(dir, `.upload-${randomBytes(8).toString('hex')}.part`)
    const tap = new HeadTap(kind, maxUploadBytes)
    // opened before streaming so that the cleanup below can never run ahead of the file's creation
    const handle = await open(part, 'wx', PRIVATE_FILE_MODE).catch(async (err: unknown) => { await drain(file); throw err })
    try {
      try {
        // flush: fsync before close, so the file is on disk before its row says it exists
        await pipeline(file.file, tap, handle.createWriteStream({ flush: true }))
      } catch (err) {
        // fs errors carry a syscall and are ours (500); anything else is the client's stream breaking off
        if (err instanceof Error && 'syscall' in err) throw err
        throw new BadRequest('Upload interrupted')
      } finally {
        await handle.close().catch(() => {})
      }
      if (file.file.truncated || tap.bytes > maxUploadBytes) throw tooLarge(kind)
      if (tap.bytes === 0) throw new NoFileUploaded()
      const type = tap.sniffed()
      if (type === null || type.kind !== kind) throw wrongType(kind)
      // audio: the duration is read from the file now (send-status reads it again); a file without one is not audio we can send
      const audio = type.kind === 'audio' ? await audioDetails(part, type) : null
      if (type.kind === 'audio' && audio === null) throw wrongType(kind)

      const filename = `${Date.now()}-${randomBytes(6).toString('hex')}-${safeName(file.filename, type)}`
      // the row and the rename in one synchronous transaction: nothing else runs in between, a failed rename
      // rolls the row back; only a crash inside this step leaves a file without a row, which the next start removes
      // (PostgreSQL: the rename runs inside the transaction, before the commit; a failed commit removes the file)
      await commitUpload({ filename, kind, mime_type: type.mimeType, size: tap.bytes, created_at: Date.now() },
        () => { renameSync(part, join(dir, filename)) }, () => { rmSync(join(dir, filename), { force: true }) })
      return { filename, size: tap.bytes, mimeType: type.mimeType, ...(audio !== null ? { seconds: audio.seconds } : {}) }
    } finally {
      await unlinkQuiet(part)
    }
  }

  /** Absolute path of a stored upload, or null for anything that is not a bare stored name present on disk. */
  function resolve (filename: string): string | null {
    if (typeof filename !== 'string' || filename.includes('..') || !STORED_NAME.test(filename)) return null
    const path = join(dir, filename)
    if (dirname(path) !== dir) return null
    try {
      return lstatSync(path).isFile() ? path : null
    } catch {
      return null
    }
  }

  async function remove (filename: string): Promise<boolean> {
    const path = resolve(filename)
    const deleted = path !== null && await unlinkQuiet(path)
    await deleteUpload(db, filename)
    return deleted
  }

  return { dir, save, resolve, remove }
}

/**
 * How long a file in UPLOAD_DIR must have been left untouched before a start may call it abandoned.
 * 0 on SQLite: one process owns the folder, so whatever a previous run left is abandoned. On PostgreSQL
 * several nodes may share the folder (docs/cluster.md): another node's upload in progress has a `.part`
 * file written to moments ago, or a stored name renamed a moment before its row commits, and must not be
 * removed under it. An upload stream idle this long has been dropped by the HTTP server already.
 */
export const SHARED_DIR_GRACE_MS = 10 * 60_000

/** Whether a file was last written more than graceMs ago (always, for 0; never, when it is already gone). */
async function abandoned (path: string, graceMs: number, now: number): Promise<boolean> {
  if (graceMs <= 0) return true
  try {
    return now - (await lstat(path)).mtimeMs > graceMs
  } catch {
    return false
  }
}

/** Creates the folder and removes `.part` files left by a run that stopped mid-upload (untouched for graceMs). */
export async function prepareUploadDir (dir: string, graceMs = 0, now = Date.now()): Promise<number> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  let removed = 0
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.part')) continue
    const path = join(dir, entry.name)
    if (await abandoned(path, graceMs, now) && await unlinkQuiet(path)) removed++
  }
  return removed
}

export interface Reconciled {
  /** unfinished `.part` files removed */
  parts: number
  /** stored-name files that had no row (a crash between rename and commit), removed */
  filesWithoutRow: string[]
  /** rows whose file was gone (removed by hand, or a crash between unlink and delete), removed */
  rowsWithoutFile: string[]
}

/**
 * Start-up reconciliation of UPLOAD_DIR with the `uploads` table, so that every upload is a complete
 * file with its row, or neither: `.part` files go, files under a stored name without a row go, rows
 * without a file go. Files whose names the service never gives are left alone. With graceMs (a folder
 * shared by several nodes) a file written to within graceMs may be another node's upload in progress,
 * and stays.
 */
export async function reconcileUploads (dir: string, db: Kysely<Database>, graceMs = 0): Promise<Reconciled> {
  const now = Date.now()
  const parts = await prepareUploadDir(dir, graceMs, now)
  // rows before the folder: an upload commits its row after its rename, so a row read here has its file
  // in the listing below unless the file is really gone
  const rows = new Set((await db.selectFrom('uploads').select('filename').execute()).map((r) => r.filename))
  const files = new Set<string>()
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isFile() && STORED_NAME.test(entry.name)) files.add(entry.name)
  }
  const filesWithoutRow: string[] = []
  for (const name of files) {
    const path = join(dir, name)
    if (!rows.has(name) && await abandoned(path, graceMs, now) && await unlinkQuiet(path)) filesWithoutRow.push(name)
  }
  const rowsWithoutFile = [...rows].filter((f) => !files.has(f))
  for (const name of rowsWithoutFile) await deleteUpload(db, name)
  return { parts, filesWithoutRow, rowsWithoutFile }
}

/** Logs what reconcileUploads removed: names at warn (at most 20), counts always. */
export function logReconciled (log: FastifyBaseLogger, dir: string, r: Reconciled): void {
  if (r.parts > 0) log.info({ dir, removed: r.parts }, 'removed unfinished uploads from a previous run')
  if (r.filesWithoutRow.length > 0) log.warn({ dir, removed: r.filesWithoutRow.length, files: r.filesWithoutRow.slice(0, 20) }, 'removed uploaded files that had no database row (interrupted upload)')
  if (r.rowsWithoutFile.length > 0) log.warn({ dir, removed: r.rowsWithoutFile.length, files: r.rowsWithoutFile.slice(0, 20) }, 'removed upload rows whose file is missing')
}

/**
 * The stored suffix for an original name: basename only, `[A-Za-z0-9._-]` kept (others → `_`), no `..`,
 * length-capped, and the extension set to the sniffed type's unless it already is one of its spellings.
 */
export function safeName (original: string, type: SniffedType): string {
  const base = original.split(/[/\\]/).pop() ?? ''
  const cleaned = base.replace(/[^A-Za-z0-9._-]/g, '_').replace(/\.{2,}/g, '.')
  const m = /^(.*)\.([A-Za-z0-9]{1,5})$/.exec(cleaned)
  const ext = m?.[2].toLowerCase()
  const stem = (m === null ? cleaned : m[1]).slice(0, MAX_STEM).replace(/^\.+|\.+$/g, '')
  const allowed = extensionsOf(type)
  return `${stem === '' ? 'upload' : stem}.${ext !== undefined && allowed.includes(ext) ? ext : type.ext}`
}

/** Whether the part's declared content type fits the kind: `<kind>/*`, and for audio also `application/ogg` (RFC 5334). */
function declaredAs (mimetype: string, kind: MediaKind): boolean {
  const declared = mimetype.toLowerCase()
  return declared.startsWith(`${kind}/`) || (kind === 'audio' && declared.startsWith('application/ogg'))
}

/** Reads a file part to its end without keeping it, so the rest of the request can be parsed and answered. */
export async function drain (file: MultipartFile): Promise<void> {
  await pipeline(file.file, new Writable({ write: (_chunk, _enc, cb) => { cb() } })).catch(() => {})
}

async function unlinkQuiet (path: string): Promise<boolean> {
  try {
    await unlink(path)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw err
  }
}

/**
 * Passes the stream through while keeping its first bytes for sniffing and counting the total.
 * Once the head shows the wrong kind, or the size passes the limit, it keeps reading but stops
 * writing, so a refused upload costs no more disk and the request is still read to its end.
 */
class HeadTap extends Transform {
  bytes = 0
  private head: Buffer[] = []
  private headBytes = 0
  private refused = false

  constructor (private readonly kind: MediaKind, private readonly limit: number) {
    super()
  }

  sniffed (): SniffedType | null {
    return sniff(Buffer.concat(this.head))
  }

  override _transform (chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length
    if (this.headBytes < SNIFF_BYTES) {
      const wanted = chunk.subarray(0, SNIFF_BYTES - this.headBytes)
      this.head.push(wanted)
      this.headBytes += wanted.length
      if (this.headBytes === SNIFF_BYTES && this.sniffed()?.kind !== this.kind) this.refused = true
    }
    if (this.bytes > this.limit) this.refused = true
    cb(null, this.refused ? undefined : chunk)
  }
}

export default fp(async (app) => {
  const store = createMediaStore({
    dir: app.config.uploadDir,
    db: app.db.db,
    commitUpload: uploadCommitterFor(app.db),
    maxUploadBytes: app.config.maxUploadBytes,
    maxUploadMb: app.config.maxUploadMb
  })
  // before any request: none of this node's uploads can be half-way now (other nodes' can: see SHARED_DIR_GRACE_MS)
  const graceMs = app.db.dialect === 'sqlite' ? 0 : SHARED_DIR_GRACE_MS
  logReconciled(app.log, store.dir, await reconcileUploads(store.dir, app.db.db, graceMs))
  for (const t of secureUploadDir(store.dir)) app.log.warn(t, `tightened the mode of ${t.path} from ${t.from} to ${t.to}`)
  app.decorate('mediaStore', store)
}, { name: 'media-store', dependencies: ['config', 'db'] })
