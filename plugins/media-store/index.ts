import { randomBytes } from 'node:crypto'
import { lstatSync, renameSync, rmSync } from 'node:fs'
import { open, readdir } from 'node:fs/promises'
import { dirname, join, resolve as resolvePath } from 'node:path'
import { Transform, type TransformCallback } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import fp from 'fastify-plugin'
import type { MultipartFile } from '@fastify/multipart'
import { BadRequest, NoFileUploaded } from '../../src/errors.js'
import type { UploadStore } from '../../src/db/stores/uploads.js'
import { audioDetails } from '../../src/media/audio.js'
import { sniff, SNIFF_BYTES, type SniffedType } from '../../src/media/sniff.js'
import type { MediaKind } from '../../src/media/types.js'
import { PRIVATE_FILE_MODE, secureUploadDir } from '../../src/db/file-modes.js'
import { abandoned, declaredAs, drain, isStoredName, safeName, logReconciled, prepareUploadDir, SHARED_DIR_GRACE_MS, STORED_NAME, unlinkQuiet, type MediaStore, type Reconciled, type SavedUpload, tooLargeFor, wrongType } from './media-port.js'

export { drain, prepareUploadDir, safeName, SHARED_DIR_GRACE_MS, type MediaStore } from './media-port.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** uploaded media (MEDIA_STORE: UPLOAD_DIR or an S3 bucket), one `uploads` row per file */
    mediaStore: MediaStore
  }
}

/** The local store: the port, plus the folder and the path of a stored file. */
export interface LocalMediaStore extends MediaStore {
  readonly dir: string
  /** absolute path of a stored upload, or null for anything that is not a bare stored name present on disk */
  resolve: (filename: string) => string | null
}

export interface MediaStoreOptions {
  dir: string
  /** the rows; a file's row is committed with its rename (UploadStore.commit) */
  uploads: UploadStore
  maxUploadBytes: number
  maxUploadMb: number
}

/** The local-disk store (MEDIA_STORE=local): every upload a 0600 file in UPLOAD_DIR. */
export function createMediaStore (opts: MediaStoreOptions): LocalMediaStore {
  const dir = resolvePath(opts.dir)
  const { uploads, maxUploadBytes } = opts
  const tooLarge = tooLargeFor(opts.maxUploadMb)

  async function save (file: MultipartFile, kind: MediaKind): Promise<SavedUpload> {
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
      // the row and the rename in one transaction: the rename runs inside it, before the commit; a failed rename
      // rolls the row back, a failed commit removes the file; only a crash inside this step leaves a file
      // without a row, which the next start removes
      await uploads.commit({ filename, kind, mimeType: type.mimeType, size: tap.bytes, createdAt: Date.now() },
        () => { renameSync(part, join(dir, filename)) }, () => { rmSync(join(dir, filename), { force: true }) })
      return { filename, size: tap.bytes, mimeType: type.mimeType, ...(audio !== null ? { seconds: audio.seconds } : {}) }
    } finally {
      await unlinkQuiet(part)
    }
  }

  /** Absolute path of a stored upload, or null for anything that is not a bare stored name present on disk. */
  function resolve (filename: string): string | null {
    if (!isStoredName(filename)) return null
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
    await uploads.remove(filename)
    return deleted
  }

  return {
    kind: 'local',
    location: dir,
    dir,
    save,
    resolve,
    remove,
    exists: async (filename: string) => resolve(filename) !== null,
    // the file itself: nothing to release
    open: async (filename: string) => {
      const path = resolve(filename)
      return path === null ? null : { path, release: async () => {} }
    },
    reconcile: async (graceMs: number) => await reconcileUploads(dir, uploads, graceMs),
    close: async () => {}
  }
}

/**
 * Start-up reconciliation of UPLOAD_DIR with the `uploads` table, so that every upload is a complete
 * file with its row, or neither: `.part` files go, files under a stored name without a row go, rows
 * without a file go. Files whose names the service never gives are left alone. With graceMs (a folder
 * shared by several nodes) a file written to within graceMs may be another node's upload in progress,
 * and stays.
 */
export async function reconcileUploads (dir: string, uploads: UploadStore, graceMs = 0): Promise<Reconciled> {
  const now = Date.now()
  const parts = await prepareUploadDir(dir, graceMs, now)
  // rows before the folder: an upload commits its row after its rename, so a row read here has its file
  // in the listing below unless the file is really gone
  const rows = new Set(await uploads.names())
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
  for (const name of rowsWithoutFile) await uploads.remove(name)
  return { parts, filesWithoutRow, rowsWithoutFile }
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
  const { media, uploadDir, maxUploadBytes, maxUploadMb } = app.config
  // chosen once: nothing else asks which store it has
  // the S3 store loads the AWS SDK (about 0.3 to 0.45 s of CPU at every start) only when it is the one chosen
  const store: MediaStore = media.store === 's3'
    ? (await import('./s3-store.js')).createS3MediaStore({ s3: media.s3, scratchDir: uploadDir, uploads: app.stores.uploads, maxUploadBytes, maxUploadMb, log: app.log })
    : createMediaStore({ dir: uploadDir, uploads: app.stores.uploads, maxUploadBytes, maxUploadMb })
  app.addHook('onClose', async () => { await store.close() })
  // before any request: none of this node's uploads can be half-way now (other nodes' can: see SHARED_DIR_GRACE_MS)
  const graceMs = app.stores.uploads.shared ? SHARED_DIR_GRACE_MS : 0
  logReconciled(app.log, store.location, await store.reconcile(graceMs))
  // S3: UPLOAD_DIR holds only the temporary copies of media being sent (and url statuses' downloads)
  for (const t of secureUploadDir(app.config.uploadDir)) app.log.warn(t, `tightened the mode of ${t.path} from ${t.from} to ${t.to}`)
  app.log.info({ store: store.kind, location: store.location }, 'media store ready')
  app.decorate('mediaStore', store)
}, { name: 'media-store', dependencies: ['config', 'db'] })
