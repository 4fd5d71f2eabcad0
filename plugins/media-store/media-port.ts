import { randomBytes } from 'node:crypto'
import { lstat, mkdir, open, readdir, unlink, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { MultipartFile } from '@fastify/multipart'
import type { FastifyBaseLogger, FastifyError } from 'fastify'
import type { SniffedType } from '../../src/media/sniff.js'
import { extensionsOf, type MediaKind } from '../../src/media/types.js'
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../src/db/file-modes.js'
import { FileTooLarge, VideoTooLarge, WrongAudioType, WrongFileType } from '../../src/errors.js'

// The one interface the rest of the service sees for uploaded media (the port): a local-disk store
// (media-store.ts, UPLOAD_DIR) and an S3-compatible one (s3-store.ts), chosen once at start by MEDIA_STORE.
// Every stored upload is a complete file or object with its `uploads` row, or neither.

export interface SavedUpload {
  filename: string
  size: number
  mimeType: string
  /** audio: the duration read from the file before its row was committed (whole seconds, at least 1) */
  seconds?: number
}

/** A local file holding an upload's bytes, for the platform to read; `release` when the send is over. */
export interface MediaCopy { path: string, release: () => Promise<void> }

export interface Reconciled {
  /** unfinished uploads removed (`.part` files; S3: multipart uploads aborted) */
  parts: number
  /** stored names that had no row (a crash between the file's completion and the row's commit), removed */
  filesWithoutRow: string[]
  /** rows whose file was gone (removed by hand, or a crash between unlink and delete), removed */
  rowsWithoutFile: string[]
}

export interface MediaStore {
  readonly kind: 'local' | 's3'
  /** where the uploads are: UPLOAD_DIR, or `s3://bucket` (for GET /api/storage and the logs) */
  readonly location: string
  /** streams a multipart file in, checks its content, and commits it with its row */
  save: (file: MultipartFile, kind: MediaKind) => Promise<SavedUpload>
  /** whether `filename` is a stored upload (a bare stored name whose file or object exists) */
  exists: (filename: string) => Promise<boolean>
  /** the upload as a local file for the platform to read (S3: a temporary copy); null when it is not stored */
  open: (filename: string) => Promise<MediaCopy | null>
  /** removes the file or object and its row; whether a file or object was removed */
  remove: (filename: string) => Promise<boolean>
  /**
   * Start-up: unfinished uploads go, stored names without a row go, rows without a file go. With graceMs
   * (a store shared by several nodes) anything written within graceMs may be another node's upload in
   * progress, and stays.
   */
  reconcile: (graceMs: number) => Promise<Reconciled>
  /** releases the store's connections (the plugin's onClose) */
  close: () => Promise<void>
}

// `<Date.now()>-<12 hex>-<sanitized name>`; the name part never holds `..` (see safeName)
export const STORED_NAME = /^[0-9]{1,16}-[0-9a-f]{12}-[A-Za-z0-9._-]{1,110}$/
const MAX_STEM = 100

/**
 * How long an upload left in a shared store must have been untouched before a start may call it abandoned.
 * 0 on SQLite: one process owns the store, so whatever a previous run left is abandoned. On PostgreSQL
 * several nodes share it (docs/cluster.md): another node's upload in progress was written to moments ago,
 * or completed a moment before its row commits, and must not be removed under it. An upload stream idle
 * this long has been dropped by the HTTP server already.
 */
export const SHARED_DIR_GRACE_MS = 10 * 60_000

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
export function declaredAs (mimetype: string, kind: MediaKind): boolean {
  const declared = mimetype.toLowerCase()
  return declared.startsWith(`${kind}/`) || (kind === 'audio' && declared.startsWith('application/ogg'))
}

/** The refusal of content that is not of the kind: audio (an addition to the seed's two kinds) names its field and formats. */
export function wrongType (kind: MediaKind): FastifyError {
  return kind === 'audio' ? new WrongAudioType() : new WrongFileType()
}

/** The refusal of a file over MAX_UPLOAD_MB: video names the limit, images and audio keep the seed's answer. */
export function tooLargeFor (maxUploadMb: number): (kind: MediaKind) => FastifyError {
  return (kind) => kind === 'video' ? new VideoTooLarge(maxUploadMb) : new FileTooLarge()
}

/** Whether `filename` is a bare name the service gives to uploads (never a path). */
export function isStoredName (filename: unknown): filename is string {
  return typeof filename === 'string' && !filename.includes('..') && STORED_NAME.test(filename)
}

/** Reads a file part to its end without keeping it, so the rest of the request can be parsed and answered. */
export async function drain (file: MultipartFile): Promise<void> {
  await pipeline(file.file, new Writable({ write: (_chunk, _enc, cb) => { cb() } })).catch(() => {})
}

/** Logs what a reconciliation removed: names at warn (at most 20), counts always. */
export function logReconciled (log: FastifyBaseLogger, location: string, r: Reconciled): void {
  if (r.parts > 0) log.info({ location, removed: r.parts }, 'removed unfinished uploads from a previous run')
  if (r.filesWithoutRow.length > 0) log.warn({ location, removed: r.filesWithoutRow.length, files: r.filesWithoutRow.slice(0, 20) }, 'removed uploaded files that had no database row (interrupted upload)')
  if (r.rowsWithoutFile.length > 0) log.warn({ location, removed: r.rowsWithoutFile.length, files: r.rowsWithoutFile.slice(0, 20) }, 'removed upload rows whose file is missing')
}

/** Whether a file was last written more than graceMs ago (always, for 0; never, when it is already gone). */
export async function abandoned (path: string, graceMs: number, now: number): Promise<boolean> {
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

export async function unlinkQuiet (path: string): Promise<boolean> {
  try {
    await unlink(path)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw err
  }
}

/** A 0600 `.part` file in the node's own folder that an upload is also written to as it streams (S3 audio: s3-store.ts). */
export class LocalCopy {
  private closed = false

  private constructor (readonly path: string, private readonly handle: FileHandle) {}

  static async create (dir: string): Promise<LocalCopy> {
    const path = join(dir, `.upload-${randomBytes(8).toString('hex')}.part`)
    return new LocalCopy(path, await open(path, 'wx', PRIVATE_FILE_MODE))
  }

  async write (chunk: Buffer): Promise<void> {
    for (let at = 0; at < chunk.length;) at += (await this.handle.write(chunk, at)).bytesWritten
  }

  /** Closes the file; its path, to be read. */
  async complete (): Promise<string> {
    await this.close()
    return this.path
  }

  async remove (): Promise<void> {
    await this.close().catch(() => {})
    await unlink(this.path).catch(() => {})
  }

  private async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.handle.close()
  }
}
